// web/server.ts over real loopback HTTP: the app's files, /config.json, client-side routes, no
// path escapes, and no faucet of its own (the page uses the API's). Hostile input and its log
// lines: test/hostile/web-server.test.ts.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { request } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { brotliDecompressSync, gunzipSync } from "node:zlib"
import { acceptedEncodings, precompress } from "../../web/compress.ts"
import { startWebServer, type WebServer } from "../../web/server.ts"

let dir: string
const BIG = Array.from({ length: 2_000 }, (_, i) => `export const value${i} = ${i} * 7 // a line of the bundle`).join("\n")
let web: WebServer
const config = { api_url: "http://127.0.0.1:1", ws_url: "ws://127.0.0.1:1/v1/ws", deposit_url: null, chain_rpc_url: null, chain_id: null, token_address: null, faucet: false }

/** A raw GET, so `..` segments reach the server unnormalised. */
const rawGet = (path: string): Promise<{ status: number; body: string }> =>
  new Promise((resolve, reject) => {
    const u = new URL(web.url)
    const req = request({ host: u.hostname, port: u.port, path, method: "GET" }, (res) => {
      let body = ""
      res.on("data", (c: Buffer) => (body += c.toString("utf8")))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on("error", reject)
    req.end()
  })

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "twinbook-web-server-"))
  mkdirSync(join(dir, "dist", "assets"), { recursive: true })
  writeFileSync(join(dir, "dist", "index.html"), "<!doctype html><title>app</title>")
  writeFileSync(join(dir, "dist", "assets", "app-1.js"), "console.log(1)")
  writeFileSync(join(dir, "secret.txt"), "not for the web")
  // A bundle big enough to compress, precompressed as web/build.ts does after Vite.
  writeFileSync(join(dir, "dist", "assets", "big-2.js"), BIG)
  precompress(join(dir, "dist"))
  web = await startWebServer({ host: "127.0.0.1", port: 0, distDir: join(dir, "dist"), config })
})

afterAll(async () => {
  await web?.close()
  rmSync(dir, { recursive: true, force: true })
})

describe("the web app's server", () => {
  it("serves the app, its assets (immutable) and client-side routes", async () => {
    const index = await fetch(`${web.url}/`)
    expect(index.status).toBe(200)
    expect(index.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(await index.text()).toContain("<title>app</title>")
    const js = await fetch(`${web.url}/assets/app-1.js`)
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
    expect(js.headers.get("cache-control")).toContain("immutable")
    expect(await (await fetch(`${web.url}/portfolio`)).text()).toContain("<title>app</title>")
    expect((await fetch(`${web.url}/assets/missing.js`)).status).toBe(404)
  })

  it("tells the page where the service is", async () => {
    expect(await (await fetch(`${web.url}/config.json`)).json()).toEqual(config)
  })

  it("never serves a file outside the build", async () => {
    for (const path of ["/../secret.txt", "/%2e%2e/secret.txt", "/assets/../../secret.txt"]) {
      const r = await rawGet(path)
      expect(r.body).not.toContain("not for the web")
    }
  })

  it("takes no POST: the development faucet is the API's (POST /v1/dev/faucet), not this server's", async () => {
    const r = await fetch(`${web.url}/dev/faucet`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ wallet: `0x${"1".repeat(40)}` }) })
    expect(r.status).toBe(405)
    expect(r.headers.get("allow")).toBe("GET, HEAD")
    expect(await r.json()).toEqual({ error: "method_not_allowed", detail: expect.stringContaining("only serves files") })
  })

  it("sends the build's precompressed brotli or gzip file when the browser accepts it, else the file itself", async () => {
    expect(existsSync(join(dir, "dist", "assets", "big-2.js.br"))).toBe(true)
    expect(existsSync(join(dir, "dist", "assets", "app-1.js.br")), "a file under 1 KB is not worth it").toBe(false)
    const get = (acceptEncoding: string | null): Promise<{ headers: Record<string, string | string[] | undefined>; body: Buffer }> =>
      new Promise((resolve, reject) => {
        const u = new URL(web.url)
        const req = request({ host: u.hostname, port: u.port, path: "/assets/big-2.js", headers: acceptEncoding === null ? {} : { "accept-encoding": acceptEncoding } }, (res) => {
          const chunks: Buffer[] = []
          res.on("data", (c: Buffer) => chunks.push(c))
          res.on("end", () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }))
        })
        req.on("error", reject)
        req.end()
      })
    const br = await get("gzip, deflate, br")
    expect(br.headers["content-encoding"]).toBe("br")
    expect(br.headers["vary"]).toBe("accept-encoding")
    expect(br.headers["cache-control"]).toContain("immutable")
    expect(br.headers["content-type"]).toBe("text/javascript; charset=utf-8")
    expect(Number(br.headers["content-length"])).toBe(br.body.length)
    expect(br.body.length).toBeLessThan(BIG.length / 5)
    expect(brotliDecompressSync(br.body).toString("utf8")).toBe(BIG)
    const gz = await get("gzip, br;q=0")
    expect(gz.headers["content-encoding"]).toBe("gzip")
    expect(gunzipSync(gz.body).toString("utf8")).toBe(BIG)
    for (const none of [null, "identity", "deflate", "*;q=0"]) {
      const plain = await get(none)
      expect(plain.headers["content-encoding"], String(none)).toBeUndefined()
      expect(plain.headers["vary"]).toBe("accept-encoding")
      expect(plain.body.toString("utf8")).toBe(BIG)
    }
  })

  it("reads Accept-Encoding as RFC 9110 says: q=0 refuses a coding, * stands for the others", () => {
    expect(acceptedEncodings("gzip, deflate, br, zstd")).toEqual(["br", "gzip"])
    expect(acceptedEncodings("br;q=0.5, gzip;q=1")).toEqual(["br", "gzip"])
    expect(acceptedEncodings("BR;Q=0, GZIP")).toEqual(["gzip"])
    expect(acceptedEncodings("*")).toEqual(["br", "gzip"])
    expect(acceptedEncodings("*, gzip;q=0")).toEqual(["br"])
    expect(acceptedEncodings("identity")).toEqual([])
    expect(acceptedEncodings(undefined)).toEqual([])
  })

  it("refuses to start without a build, saying how to make one", async () => {
    await expect(startWebServer({ host: "127.0.0.1", port: 0, distDir: join(dir, "nothing"), config })).rejects.toThrow("npm run web:build")
  })
})
