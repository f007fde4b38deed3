// The web app's server (Node only): serves the built app (web/dist) at WEB_PORT, tells the
// page where the API, WebSocket and deposit service are (`/config.json`), and, on the embedded
// development chain only, a test-USDG faucet (`POST /dev/faucet`, docs/api.md "Web app").
// It holds no user state: the page talks to the API directly (CORS allow-list).
import { existsSync, readFileSync, statSync } from "node:fs"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { extname, join, normalize, resolve, sep } from "node:path"
import type { Hex } from "viem"
import { type Address, normalizeAddress } from "../src/chain/chain.ts"
import { makeDevFaucet } from "../src/chain/faucet.ts"
import { DEFAULT_DIST } from "./paths.ts"


/** What the page reads from `/config.json`: every address it talks to. */
export interface WebConfig {
  readonly api_url: string
  readonly ws_url: string
  readonly deposit_url: string | null
  /** The deposit chain's RPC for a browser-held development wallet; null when no faucet. */
  readonly chain_rpc_url: string | null
  readonly chain_id: number | null
  readonly token_address: string | null
  /** True when POST /dev/faucet works (embedded chain and DEV_CREDIT). */
  readonly faucet: boolean
}

export interface FaucetOptions {
  readonly rpcUrl: string
  readonly chainId: number
  readonly operatorKey: Hex
  readonly token: Address
  /** Test USDG per click, micro (default 100 USDG, the default per-transfer maximum). */
  readonly amountMicro?: number
}

export interface WebServerOptions {
  readonly host: string
  /** 0 picks a free port. */
  readonly port: number
  readonly distDir?: string
  readonly config: Omit<WebConfig, "faucet">
  /** Present only on the embedded chain with DEV_CREDIT on. */
  readonly faucet?: FaucetOptions
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

/** The shared development faucet (src/chain/faucet.ts) at this server's fixed amount per click. */
const makeFaucet = (o: FaucetOptions) => {
  const mint = makeDevFaucet(o)
  const amount = BigInt(o.amountMicro ?? 100_000_000)
  return async (to: Address): Promise<{ tx: Hex; amount_micro: number }> => ({ tx: (await mint(to, amount)).txHash, amount_micro: Number(amount) })
}

const readBody = (req: IncomingMessage, max = 4096): Promise<string> =>
  new Promise((resolveBody, reject) => {
    let size = 0
    const chunks: Buffer[] = []
    req.on("data", (c: Buffer) => {
      size += c.length
      if (size > max) {
        reject(new Error("body too large"))
        req.destroy()
      } else chunks.push(c)
    })
    req.on("end", () => resolveBody(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

const json = (res: ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" })
  res.end(JSON.stringify(body))
}

export const startWebServer = async (o: WebServerOptions): Promise<WebServer> => {
  const dist = resolve(o.distDir ?? DEFAULT_DIST)
  if (!existsSync(join(dist, "index.html"))) throw new Error(`web app not built: ${dist}/index.html is missing (run npm run web:build)`)
  const faucet = o.faucet === undefined ? null : makeFaucet(o.faucet)
  const config: WebConfig = { ...o.config, faucet: faucet !== null }

  const serveFile = (res: ServerResponse, path: string): void => {
    const type = TYPES[extname(path)] ?? "application/octet-stream"
    // Hashed assets never change; index.html must be re-read so a rebuild is picked up.
    const cache = path.includes(`${sep}assets${sep}`) ? "public, max-age=31536000, immutable" : "no-cache"
    res.writeHead(200, { "content-type": type, "cache-control": cache, "x-content-type-options": "nosniff" })
    res.end(readFileSync(path))
  }

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://web.invalid")
    if (url.pathname === "/config.json") return json(res, 200, config)
    if (url.pathname === "/dev/faucet") {
      if (req.method !== "POST") return json(res, 405, { error: "method_not_allowed" })
      if (faucet === null) return json(res, 404, { error: "not_found", detail: "the faucet runs only on the embedded development chain with DEV_CREDIT on" })
      let wallet: Address | null = null
      try {
        wallet = normalizeAddress((JSON.parse(await readBody(req)) as { wallet?: unknown }).wallet)
      } catch {
        return json(res, 400, { error: "invalid_json" })
      }
      if (wallet === null) return json(res, 400, { error: "invalid_address", detail: "wallet must be 0x + 40 hex characters" })
      try {
        return json(res, 200, { wallet, ...(await faucet(wallet)) })
      } catch (err) {
        return json(res, 502, { error: "faucet_failed", detail: (err instanceof Error ? err.message : String(err)).slice(0, 200) })
      }
    }
    if (req.method !== "GET" && req.method !== "HEAD") return json(res, 405, { error: "method_not_allowed" })
    const rel = normalize(decodeURIComponent(url.pathname)).replace(/^([/\\])+/, "")
    const path = join(dist, rel)
    if (!path.startsWith(dist)) return json(res, 404, { error: "not_found" })
    if (rel !== "" && existsSync(path) && statSync(path).isFile()) return serveFile(res, path)
    // Client-side routes (hash-based, but a deep link to /anything still gets the app).
    if (extname(rel) === "" || rel === "") return serveFile(res, join(dist, "index.html"))
    return json(res, 404, { error: "not_found" })
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) json(res, 500, { error: "internal_error", detail: String(err).slice(0, 200) })
      else res.destroy()
    })
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
