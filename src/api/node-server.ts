// The live transport: node:http in front of the transport-free app, and one
// upgrade handler (`ws`, noServer) for /v1/ws in front of the feed hub.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { createRequire } from "node:module"
import type { AddressInfo } from "node:net"
import type { WebSocket, WebSocketServer } from "ws"
import { readCookie, SESSION_COOKIE, verifySessionCookie } from "../auth/session-cookie.ts"
import type { FeedHub, FeedSocket } from "../feed/hub.ts"
import { ApiError, errorBody } from "../domain/errors.ts"
import type { Logger } from "../ops/log.ts"
import type { App } from "./app.ts"
import { API_TABLE } from "./declaration/table.ts"
import { corsHeaders } from "./cors.ts"
import { errorResponse, type HttpRequest, type HttpResponse } from "./http.ts"

const MAX_BODY_BYTES = 64 * 1024

/** `ws`, loaded by the first server that listens: most processes (the simulator, CLIs, workers) never do, and its load was ~50 ms of each start. */
let wsModule: typeof import("ws") | undefined
const ws = (): typeof import("ws") => (wsModule ??= createRequire(import.meta.url)("ws") as typeof import("ws"))
/**
 * The largest WebSocket frame a client may send; a larger one closes the connection (1009) before
 * it is read. SPEC's client frames are a few hundred bytes; the bound keeps each frame's work small.
 */
const MAX_WS_PAYLOAD_BYTES = 16 * 1024

export interface NodeServerOptions {
  readonly app: App
  /** The WebSocket feed on /v1/ws; a server without one (the deposit service) answers upgrades 404. */
  readonly hub: FeedHub | null
  readonly host: string
  readonly port: number
  readonly secret: Uint8Array
  readonly nowMs: () => number
  /** Origins whose WebSocket upgrades may use the session cookie. */
  readonly corsOrigins: ReadonlySet<string>
  /** WebSocket connects and disconnects, one line each (docs/metrics.md "Logs"); none when absent. */
  readonly logger?: Logger
}

export interface RunningServer {
  readonly server: Server
  readonly port: number
  readonly url: string
  readonly wsUrl: string
  /**
   * The first step of a stop (SIGTERM): stops accepting connections, closes idle keep-alive ones,
   * tells WebSocket clients (1001 "going away"), and resolves once every request in flight has been
   * answered — each with `connection: close` — and the sockets are closed (those that ignore the
   * close frame are cut after WS_CLOSE_GRACE_MS). Idempotent.
   */
  drain(): Promise<void>
  /** Requests read but not yet answered, and WebSocket clients still open (what a drain waits for). */
  pending(): { readonly requests: number; readonly sockets: number }
  close(): Promise<void>
}

/**
 * Connections the kernel may hold for us before we accept them (capped by net.core.somaxconn).
 * Node's default, 511, overflowed under a burst of WebSocket connects (issue 31): the kernel then
 * drops handshakes, and every client arriving meanwhile — a health probe too — waits for TCP's
 * retransmissions (1 s, 3 s, 7 s, 15 s…) however idle the event loop is.
 */
const LISTEN_BACKLOG = 4096

/** How long a WebSocket client may take to answer the close frame of a drain before its socket is cut. */
const WS_CLOSE_GRACE_MS = 1_000

const toRequest = (req: IncomingMessage, body: string): HttpRequest => {
  const raw = req.url ?? "/"
  const q = raw.indexOf("?")
  return {
    method: req.method ?? "GET",
    path: q < 0 ? raw : raw.slice(0, q),
    query: new URLSearchParams(q < 0 ? "" : raw.slice(q + 1)),
    headers: req.headers as Record<string, string | undefined>,
    body,
    ip: req.socket.remoteAddress ?? "unknown"
  }
}

// One piece: a factory whose inner functions (write, clientError, upgrade, drain) share the server and its connection sets.
export const listen = (opts: NodeServerOptions): Promise<RunningServer> => {
  const write = (res: ServerResponse, out: HttpResponse): void => {
    // An explicit length avoids chunked encoding: one write, cheaper framing. HEAD keeps the GET length.
    out.headers["content-length"] ??= String(Buffer.byteLength(out.body))
    // Draining: the answer goes out, then the connection closes (the client reconnects elsewhere).
    if (draining) out.headers["connection"] = "close"
    res.writeHead(out.status, out.headers)
    res.end(out.body)
  }
  /** Refuses an oversized body as soon as it is known, without reading the rest, and closes the connection. */
  const tooLarge = (req: IncomingMessage, res: ServerResponse): void => {
    const out = errorResponse(new ApiError("payload_too_large", `body over ${MAX_BODY_BYTES} bytes`))
    Object.assign(out.headers, corsHeaders(toRequest(req, ""), opts.corsOrigins), { connection: "close" })
    write(res, out)
    req.destroy()
  }
  let draining = false
  let inFlight = 0
  let onSettled: (() => void) | null = null
  const server = createServer((req, res) => {
    inFlight++
    // "close" follows the last byte of the answer, or a connection lost first: no longer in flight.
    res.once("close", () => {
      inFlight--
      onSettled?.()
    })
    if (Number(req.headers["content-length"] ?? 0) > MAX_BODY_BYTES) return tooLarge(req, res)
    const chunks: Buffer[] = []
    let size = 0
    let refused = false
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size <= MAX_BODY_BYTES) chunks.push(chunk)
      else if (!refused) {
        refused = true
        tooLarge(req, res)
      }
    })
    req.on("end", () => {
      if (refused) return
      // A small body arrives in one chunk: decoded as it is, without a copy.
      const body = chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8")
      void opts.app(toRequest(req, body)).then((out) => write(res, out))
    })
  })
  server.keepAliveTimeout = 65_000
  // A request node:http cannot parse (garbage, a header block over 16 KiB, a request too slow to
  // arrive) still gets the envelope, not node's bare default, and its connection is closed.
  server.on("clientError", (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable || socket.writableEnded) return void socket.destroy()
    const [status, reason, code] =
      err.code === "HPE_HEADER_OVERFLOW"
        ? ([431, "Request Header Fields Too Large", "headers_too_large"] as const)
        : err.code === "ERR_HTTP_REQUEST_TIMEOUT"
          ? ([408, "Request Timeout", "request_timeout"] as const)
          : ([400, "Bad Request", "bad_request"] as const)
    const body = JSON.stringify(errorBody(code, "the request could not be read as HTTP/1.1"))
    socket.end(`HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`)
  })

  // One client frame per socket per event-loop turn (`allowSynchronousEvents: false`): a socket's
  // backlog of frames waits in its own buffers (ws pauses reading it past 16 KiB), so a storm of
  // frames costs each turn at most one frame per connection (LIMIT_WS_CONNECTIONS bounds those)
  // and an HTTP request waits one turn, not behind every frame that arrived (docs/api.md "Limits").
  const wss: WebSocketServer = new (ws().WebSocketServer)({ noServer: true, maxPayload: MAX_WS_PAYLOAD_BYTES, allowSynchronousEvents: false })
  server.on("upgrade", (req, socket, head) => {
    const path = (req.url ?? "").split("?")[0]
    const hub = opts.hub
    if (draining) return void socket.destroy() // stopping: no new feed clients
    if (path !== API_TABLE.feed.ws.path || hub === null) {
      socket.end(`HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\n\r\n${JSON.stringify(errorBody("not_found"))}`)
      return
    }
    wss.handleUpgrade(req, socket, head, (ws: WebSocket) => {
      const cookie = readCookie(req.headers.cookie, SESSION_COOKIE)
      // A browser page from another origin never borrows the user's cookie identity.
      const origin = req.headers.origin
      const trusted = origin === undefined || opts.corsOrigins.has(origin)
      const cookieUser = cookie === null || !trusted ? null : verifySessionCookie(opts.secret, cookie, Math.floor(opts.nowMs() / 1000)) // live-only: a session cookie's signed expiry is checked against the wall clock (docs/time.md)
      const address = req.socket.remoteAddress ?? "unknown"
      // Who ended it: the server's own close (slow consumer 1013, a policy 1008, a drain 1001) is
      // named as such; otherwise the code the client sent (1006 when the connection just dropped).
      const closed: { byServer: { readonly code: number; readonly reason: string } | null } = { byServer: null }
      // A client that does not answer a close frame (one that reads nothing never will) is cut
      // after a grace, and what was queued for it is freed with its socket.
      const cutAfterGrace = (): void => {
        const cut = setTimeout(() => ws.terminate(), WS_CLOSE_GRACE_MS)
        ws.once("close", () => clearTimeout(cut))
      }
      const feedSocket: FeedSocket = {
        cookieUser,
        address,
        send: (frame) => ws.send(frame),
        bufferedBytes: () => ws.bufferedAmount,
        close: (code, reason) => {
          closed.byServer ??= { code, reason }
          ws.close(code, reason)
          cutAfterGrace()
        }
      }
      const log = opts.logger
      // First: a protocol error (a frame over the size limit, bad UTF-8) is emitted as 'error', and
      // unheard it would crash the process — on a refused socket too, which a client may go on
      // writing to until the close lands. `ws` has written its close (1009, 1007, …) and would go
      // on reading and discarding whatever the client sends until the close handshake: the
      // socket is cut at once instead.
      ws.on("error", () => ws.terminate())
      if (!hub.connect(feedSocket)) {
        log?.info("ws refused", { address, code: closed.byServer?.code, reason: closed.byServer?.reason })
        return
      }
      log?.info("ws connected", { address, user: cookieUser ?? undefined, connections: hub.connections })
      ws.on("message", (data) => hub.onMessage(feedSocket, data.toString()))
      ws.on("close", (code, reason) => {
        hub.disconnect(feedSocket)
        const by = closed.byServer ?? (draining ? { code: 1001, reason: "server shutting down" } : null)
        log?.info("ws disconnected", {
          address,
          user: cookieUser ?? undefined,
          closed_by: by === null ? "client" : "server",
          code: by?.code ?? code,
          reason: by?.reason ?? (reason.length > 0 ? reason.toString("utf8").slice(0, 123) : undefined),
          connections: hub.connections
        })
      })
    })
  })

  let drained: Promise<void> | null = null
  return new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen({ port: opts.port, host: opts.host, backlog: LISTEN_BACKLOG }, () => {
      const { port } = server.address() as AddressInfo
      const host = opts.host.includes(":") ? `[${opts.host}]` : opts.host
      resolve({
        server,
        port,
        url: `http://${host}:${port}`,
        wsUrl: `ws://${host}:${port}/v1/ws`,
        drain: () => {
          drained ??= new Promise<void>((done) => {
            draining = true
            server.close() // no new connections; idle keep-alive ones close now (node ≥ 19)
            server.closeIdleConnections()
            for (const client of wss.clients) client.close(1001, "server shutting down")
            const cut = setTimeout(() => {
              for (const client of wss.clients) client.terminate()
            }, WS_CLOSE_GRACE_MS)
            onSettled = () => {
              if (inFlight > 0 || wss.clients.size > 0) return
              clearTimeout(cut)
              onSettled = null
              done()
            }
            for (const client of wss.clients) client.once("close", () => onSettled?.())
            onSettled()
          })
          return drained
        },
        pending: () => ({ requests: inFlight, sockets: wss.clients.size }),
        close: () =>
          new Promise<void>((done) => {
            for (const client of wss.clients) client.terminate()
            wss.close()
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })
}
