// The web app's server (Node only): serves the built app (web/dist) at WEB_PORT and tells the
// page where the API, WebSocket and deposit service are (`/config.json`, docs/api.md "Web app").
// It holds no user state and no faucet: the page talks to the API directly (CORS allow-list),
// the development faucet included (docs/decisions.md "One faucet"). Every request gets one log
// line like the API's; a path that is not valid percent-encoded UTF-8 is a 400, never a 500.
import { existsSync, readFileSync, statSync } from "node:fs"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { extname, join, normalize, resolve, sep } from "node:path"
import { type ErrorCode, type ErrorBody, errorBody } from "../src/domain/errors.ts"
import { errorFields, type Logger, silentLogger } from "../src/ops/log.ts"
import { liveMonoClock } from "../src/time/clock.ts"
import { acceptedEncodings, COMPRESSIBLE } from "./compress.ts"
import { DEFAULT_DIST } from "./paths.ts"
// What the page reads from `/config.json`: declared once, beside the page that reads it.
import type { WebConfig } from "./src/web-config.ts"

export type { WebConfig } from "./src/web-config.ts"

export interface WebServerOptions {
  readonly host: string
  /** 0 picks a free port. */
  readonly port: number
  readonly distDir?: string
  readonly config: WebConfig
  /** The service's logger (src/ops/log.ts): one line per request, and each unexpected error. Silent when absent. */
  readonly logger?: Logger
  /** The monotonic clock, for request durations only; the process's own when absent. */
  readonly monoMs?: () => number
}

export interface WebServer {
  readonly url: string
  readonly server: Server
  close(): Promise<void>
}

const TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".map": "application/json; charset=utf-8"
}

const json = (res: ServerResponse, status: number, body: ErrorBody | WebConfig, headers: Record<string, string> = {}): void => {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", ...headers })
  res.end(JSON.stringify(body))
}

/** A request's outcome for its log line: the envelope's code when it is an error. */
type Outcome = string | null

/** The longest path a log line carries (node allows 16 KiB of request line). */
const LOGGED_PATH_CHARS = 256

/**
 * The request target's path (origin-form `/a/b?q`, or absolute-form `http://h/a/b`), its query
 * dropped: `raw` as sent, `decoded` percent-decoded. Null when it cannot be decoded (bad
 * percent-encoding, not UTF-8) or decodes to a NUL: a bad request, never a file name.
 */
const pathOf = (target: string): { raw: string; decoded: string } | null => {
  let raw = target.split(/[?#]/, 1)[0]!
  if (!raw.startsWith("/")) {
    try {
      raw = new URL(raw).pathname
    } catch {
      return null
    }
  }
  let decoded: string
  try {
    decoded = decodeURIComponent(raw)
  } catch {
    return null // URIError: `%` not followed by two hex digits, or bytes that are not UTF-8
  }
  return decoded.includes("\0") ? null : { raw, decoded }
}

// One piece: a factory whose handlers (files, config, refusals, logging) share the dist folder, config and logger.
export const startWebServer = async (o: WebServerOptions): Promise<WebServer> => {
  const dist = resolve(o.distDir ?? DEFAULT_DIST)
  if (!existsSync(join(dist, "index.html"))) throw new Error(`web app not built: ${dist}/index.html is missing (run npm run web:build)`)
  const config = o.config
  const logger = o.logger ?? silentLogger
  const monoMs = o.monoMs ?? liveMonoClock.monoMs

  /** The build's precompressed sibling (web/compress.ts) in the best encoding the request accepts, if any. */
  const encodedVariant = (req: IncomingMessage, path: string): { file: string; encoding: "br" | "gzip" } | null => {
    for (const encoding of acceptedEncodings(req.headers["accept-encoding"])) {
      const file = `${path}.${encoding === "br" ? "br" : "gz"}`
      if (existsSync(file)) return { file, encoding }
    }
    return null
  }

  const serveFile = (req: IncomingMessage, res: ServerResponse, path: string): Outcome => {
    const variant = COMPRESSIBLE.has(extname(path)) ? encodedVariant(req, path) : null
    const body = readFileSync(variant?.file ?? path) // before the head: a file gone meanwhile (a rebuild) is an error, not a 200
    const type = TYPES[extname(path)] ?? "application/octet-stream"
    // Hashed assets never change; index.html must be re-read so a rebuild is picked up.
    const cache = path.includes(`${sep}assets${sep}`) ? "public, max-age=31536000, immutable" : "no-cache"
    res.writeHead(200, {
      "content-type": type, "cache-control": cache, "x-content-type-options": "nosniff", "content-length": String(body.length),
      // Caches must key on the request's Accept-Encoding whenever the file could come encoded.
      ...(COMPRESSIBLE.has(extname(path)) ? { vary: "accept-encoding" } : {}),
      ...(variant === null ? {} : { "content-encoding": variant.encoding })
    })
    res.end(body)
    return null
  }

  const refuse = (res: ServerResponse, status: number, error: ErrorCode, detail: string, headers?: Record<string, string>): Outcome => {
    json(res, status, errorBody(error, detail), headers)
    return error
  }

  const handle = (req: IncomingMessage, res: ServerResponse, path: { raw: string; decoded: string } | null): Outcome => {
    if (path === null) return refuse(res, 400, "bad_request", "the request path is not valid percent-encoded UTF-8")
    if (req.method !== "GET" && req.method !== "HEAD") {
      // No route here takes a body; the development faucet is the API's (POST /v1/dev/faucet).
      return refuse(res, 405, "method_not_allowed", `${req.method ?? "this method"} is not allowed here: the web app's server only serves files (GET, HEAD)`, { allow: "GET, HEAD" })
    }
    if (path.raw === "/config.json") {
      json(res, 200, config)
      return null
    }
    const rel = normalize(path.decoded).replace(/^([/\\])+/, "")
    const file = join(dist, rel)
    if (file !== dist && !file.startsWith(dist + sep)) return refuse(res, 404, "not_found", "no such file")
    if (rel !== "" && existsSync(file) && statSync(file).isFile()) return serveFile(req, res, file)
    // Client-side routes (hash-based, but a deep link to /anything still gets the app).
    if (extname(rel) === "" || rel === "") return serveFile(req, res, join(dist, "index.html"))
    return refuse(res, 404, "not_found", "no such file")
  }

  // A counter, like the API's request ids: a 500's detail names the line that logged its cause.
  let errors = 0
  const server = createServer((req, res) => {
    const t0 = monoMs()
    const method = req.method ?? "?"
    const path = pathOf(req.url ?? "/")
    const logged = (path?.raw ?? (req.url ?? "").split("?", 1)[0]!).slice(0, LOGGED_PATH_CHARS)
    let errorCode: Outcome
    try {
      errorCode = handle(req, res, path)
    } catch (err) {
      errorCode = "internal_error"
      const requestId = `w${++errors}`
      logger.error("internal error", { service: "web", request_id: requestId, method, path: logged, ...errorFields(err, logger.enabled("debug")) })
      if (res.headersSent) res.destroy()
      else json(res, 500, errorBody("internal_error", `unexpected server error (request ${requestId})`), { "x-request-id": requestId })
    }
    const level = res.statusCode >= 500 ? "error" : "info"
    if (logger.enabled(level)) {
      const durationMs = monoMs() - t0
      logger[level]("request", { service: "web", method, path: logged, status: res.statusCode, duration_ms: Math.round(durationMs * 1000) / 1000, error_code: errorCode ?? undefined })
    }
  })
  await new Promise<void>((ok, fail) => {
    server.once("error", fail)
    server.listen(o.port, o.host, () => ok())
  })
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : o.port
  return {
    url: `http://${o.host}:${port}`,
    server,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections()
        server.close(() => ok())
      })
  }
}
