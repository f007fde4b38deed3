// web/server.ts over real loopback HTTP: the app's files, /config.json, client-side routes, no
// path escapes, and no faucet of its own (the page uses the API's). Hostile input and its log
// lines: test/hostile/web-server.test.ts.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { request } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startWebServer, type WebServer } from "../../web/server.ts"

let dir: string
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

  it("refuses to start without a build, saying how to make one", async () => {
    await expect(startWebServer({ host: "127.0.0.1", port: 0, distDir: join(dir, "nothing"), config })).rejects.toThrow("npm run web:build")
  })
})
