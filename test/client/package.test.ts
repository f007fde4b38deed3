// The client SDK as a package (docs/sdk.md "Install as a package"), used as a consumer uses it:
// scripts/build-client.ts builds a copy of packages/client in a temporary folder, `npm pack`
// packs it, and an empty project outside the repository installs the tarball
// (`npm install --offline <tarball>`: the dependencies come from npm's cache, see seedLockfile).
// From there, against the real service on loopback: docs/sdk.md's Node quickstart runs with plain
// `node`, the browser quickstart is bundled by esbuild from the installed package and runs in
// Chromium from an http://127.0.0.1 page, and tsc checks consumer TypeScript against the
// installed declarations. Also: the declarations' flattened wire types equal the repository's.
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import { gzipSync } from "node:zlib"
import { build } from "esbuild"
import type { Browser } from "playwright-core"
import ts from "typescript"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { checkExternals, checkManifest, stageClientPackage } from "../../scripts/build-client.ts"
import { launchChromium } from "../web/harness.ts"
import { type ClientHarness, startClientHarness } from "./harness.ts"
import { PACKAGE_NAME, quickstart, REPO } from "./quickstart.ts"

interface Packed {
  readonly filename: string
  readonly size: number
  readonly unpackedSize: number
  readonly files: ReadonlyArray<{ readonly path: string }>
}
interface Manifest {
  readonly version: string
  readonly dependencies: Record<string, string>
}
const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, "utf8")) as T
const manifest = readJson<Manifest>(join(REPO, "packages", "client", "package.json"))

/**
 * Runs a command without blocking this process (the service under test runs in it), with npm's
 * own variables removed: under `npm test` they name the repository (npm_config_local_prefix…),
 * and the consumer's npm must act on its own folder only.
 */
const run = (cmd: string, args: ReadonlyArray<string>, opts: { cwd: string; env?: Record<string, string> }): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((resolve, reject) => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k) && k !== "INIT_CWD"))
    const child = spawn(cmd, args, { cwd: opts.cwd, env: { ...env, ...opts.env }, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => void (stdout += d.toString()))
    child.stderr.on("data", (d: Buffer) => void (stderr += d.toString()))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

const ok = async (cmd: string, args: ReadonlyArray<string>, opts: { cwd: string; env?: Record<string, string> }): Promise<string> => {
  const r = await run(cmd, args, opts)
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(" ")} (in ${opts.cwd}) exited ${r.code}\n${r.stdout}\n${r.stderr}`)
  return r.stdout
}

/**
 * An empty consumer project whose lockfile already holds the package's dependencies (and `ws`,
 * which the Node quickstart imports) at the root lockfile's versions and integrity hashes. npm's
 * cache has those tarballs (the repository's `npm install` put them there) but not the
 * registry's metadata (a lockfile install never fetches it), so a plain
 * `npm install --offline <tarball>` would stop at ENOTCACHED; with the lockfile seeded it
 * resolves nothing and installs from the cache alone.
 */
const seedConsumer = (dir: string): void => {
  const rootLock = readJson<{ packages: Record<string, { dependencies?: Record<string, string> }> }>(join(REPO, "package-lock.json"))
  const rootPkg = readJson<Manifest>(join(REPO, "package.json"))
  const direct = { ws: rootPkg.dependencies["ws"]! }
  const packages: Record<string, unknown> = { "": { name: "sdk-consumer", dependencies: direct } }
  const add = (name: string): void => {
    const key = `node_modules/${name}`
    if (packages[key] !== undefined) return
    const entry = rootLock.packages[key]
    if (entry === undefined) throw new Error(`package-lock.json has no ${key}`)
    packages[key] = entry
    for (const dep of Object.keys(entry.dependencies ?? {})) add(dep)
  }
  for (const name of [...Object.keys(manifest.dependencies), "ws"]) add(name)
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ name: "sdk-consumer", private: true, type: "module", dependencies: direct }, null, 2)}\n`)
  writeFileSync(join(dir, "package-lock.json"), `${JSON.stringify({ name: "sdk-consumer", lockfileVersion: 3, requires: true, packages }, null, 2)}\n`)
}

/** Serves the files of `dir` on 127.0.0.1 (the page that runs the browser quickstart). */
const serveDir = (dir: string): Promise<{ server: Server; origin: string }> =>
  new Promise((resolve) => {
    const types: Record<string, string> = { html: "text/html; charset=utf-8", js: "text/javascript; charset=utf-8" }
    const server = createServer((req, res) => {
      const name = (req.url ?? "/").split("?")[0] === "/" ? "index.html" : (req.url ?? "").slice(1).split("?")[0]!
      const file = join(dir, name)
      if (name.includes("..") || !existsSync(file)) return void res.writeHead(404).end()
      res.writeHead(200, { "content-type": types[name.split(".").pop()!] ?? "application/octet-stream" }).end(readFileSync(file))
    })
    server.listen(0, "127.0.0.1", () => {
      const addr = server.address()
      resolve({ server, origin: `http://127.0.0.1:${typeof addr === "object" && addr !== null ? addr.port : 0}` })
    })
  })

let tmp: string
let packed: Packed
let app: string
let web: { server: Server; origin: string }
let h: ClientHarness
let browser: Browser

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), "twinbook-client-package-"))
  const pkgDir = await stageClientPackage(join(tmp, "package"))
  packed = (JSON.parse(await ok("npm", ["pack", "--json", "--pack-destination", tmp], { cwd: pkgDir })) as Packed[])[0]!
  app = join(tmp, "app")
  seedConsumer(app)
  await ok("npm", ["install", "--offline", "--no-audit", "--no-fund", join(tmp, packed.filename)], { cwd: app })
  mkdirSync(join(tmp, "web"))
  web = await serveDir(join(tmp, "web"))
  h = await startClientHarness({ startMs: Date.now(), corsOrigins: [web.origin] }) // live-only: the quickstarts sign with the wall clock
  browser = await launchChromium()
}, 600_000)

afterAll(async () => {
  await browser?.close().catch(() => {})
  await h?.close()
  await new Promise((r) => (web === undefined ? r(undefined) : web.server.close(r)))
  if (tmp !== undefined) rmSync(tmp, { recursive: true, force: true })
})

describe("the client package (packages/client)", () => {
  it("packs the built ESM and declarations only, and installs with exactly the root's pinned dependencies and no effect", () => {
    const paths = packed.files.map((f) => f.path).sort()
    expect(paths).toEqual(expect.arrayContaining(["README.md", "package.json", "dist/index.js", "dist/node.js", "dist/types/client/index.d.ts", "dist/types/client/node.d.ts"]))
    for (const p of paths) expect(p).toMatch(/^(README\.md|package\.json|dist\/.+\.(js|d\.ts))$/) // no source, no test, no map
    const installed = join(app, "node_modules", PACKAGE_NAME)
    expect(readJson<Manifest>(join(installed, "package.json")).version).toBe(readJson<Manifest>(join(REPO, "package.json")).version)
    const rootPkg = readJson<Manifest>(join(REPO, "package.json"))
    for (const name of Object.keys(manifest.dependencies)) expect(readJson<Manifest>(join(app, "node_modules", name, "package.json")).version).toBe(rootPkg.dependencies[name])
    expect(existsSync(join(app, "node_modules", "effect"))).toBe(false)
    console.info(`${PACKAGE_NAME}: tarball ${packed.size} bytes, unpacked ${packed.unpackedSize} bytes, ${paths.length} files`)
  })

  it("runs docs/sdk.md's Node quickstart as written, with plain node, from the installed package", async () => {
    writeFileSync(join(app, "quickstart.mjs"), `${quickstart("node")}\n`)
    // Resolved inside the consumer's node_modules, not the repository's sources.
    const resolved = await ok("node", ["--input-type=module", "-e", `console.log(import.meta.resolve("${PACKAGE_NAME}/node"))`], { cwd: app })
    expect(resolved.trim()).toBe(`file://${join(app, "node_modules", PACKAGE_NAME, "dist", "node.js")}`)
    const r = await run("node", ["quickstart.mjs"], { cwd: app, env: { TWINBOOK_URL: h.url, TWINBOOK_WS_URL: h.wsUrl } })
    expect(r.stderr).toBe("")
    expect(r.code).toBe(0) // and it exited by itself: the feed closed its socket
    const lines = r.stdout.trim().split("\n")
    expect(lines[0]).toMatch(/^user [1-9A-HJ-NP-Za-km-z]{43,44}$/)
    expect(lines).toContain("refused: insufficient_balance") // the session cookie worked (else 401); a new key has no balance
    expect(lines.some((l) => l.includes("?"))).toBe(true) // the market's question was printed
    await vi.waitFor(() => expect(h.service.hub.connections).toBe(0), { timeout: 60_000 }) // the server saw that socket close
  }, 300_000)

  it("bundles docs/sdk.md's browser quickstart from the installed package and runs it in Chromium with no console error", async () => {
    const entry = join(app, "browser-quickstart.ts")
    writeFileSync(entry, `${quickstart("browser")}\n`)
    const bundled = await build({ entryPoints: [entry], absWorkingDir: app, bundle: true, platform: "browser", format: "esm", target: "es2022", minify: true, outfile: join(tmp, "web", "quickstart.js"), metafile: true, logLevel: "warning" })
    const inputs = Object.keys(bundled.metafile.inputs)
    expect(inputs.filter((i) => !i.startsWith("node_modules/") && i !== "browser-quickstart.ts")).toEqual([]) // nothing from the repository
    expect(inputs).toEqual(expect.arrayContaining([expect.stringMatching(/^node_modules\/@twinbook\/client\/dist\//)]))
    const js = readFileSync(join(tmp, "web", "quickstart.js"))
    console.info(`browser quickstart bundle: ${js.length} bytes minified, ${gzipSync(js).length} gzipped`)
    writeFileSync(
      join(tmp, "web", "index.html"),
      `<!doctype html><html><head><link rel="icon" href="data:,"><script>globalThis.TWINBOOK_URL = ${JSON.stringify(h.url)}; globalThis.TWINBOOK_WS_URL = ${JSON.stringify(h.wsUrl)}</script>` +
        `<script type="module" src="/quickstart.js"></script></head><body></body></html>`
    )
    const page = await browser.newPage()
    try {
      const logs: string[] = []
      const errors: string[] = []
      const failed = new Promise<never>((_, reject) => page.on("pageerror", reject)) // an uncaught error in the page: the quickstart threw
      failed.catch(() => {}) // one after the race below is not an unhandled rejection: \`errors\` has it
      page.on("pageerror", (err) => void errors.push(`pageerror: ${err.message}`))
      const sawBalance = new Promise<void>((resolve) =>
        page.on("console", (msg) => {
          if (msg.type() === "error") errors.push(`console: ${msg.text()}`)
          else logs.push(msg.text())
          if (msg.text().startsWith("balance ")) resolve()
        })
      )
      await page.goto(`${web.origin}/`)
      await Promise.race([sawBalance, failed])
      expect(logs.slice(0, 3)).toEqual(["feed connecting ", "feed open ", "balance 0"])
      await vi.waitFor(() => expect(h.service.hub.connections).toBe(0), { timeout: 60_000 }) // the quickstart closed its socket
      expect(errors).toEqual([])
    } finally {
      await page.close()
    }
  }, 300_000)

  it("type-checks consumer TypeScript against the installed declarations (NodeNext without DOM, and a bundler with DOM)", async () => {
    writeFileSync(join(app, "browser-quickstart.ts"), `${quickstart("browser")}\n`)
    writeFileSync(
      join(app, "consumer.ts"),
      `import { ApiClient, ApiFailure, FeedClient, unwrap, type ApiResult, type BookSnapshot, type Market, type OrderResponse, type ServerFrame, type StrategyWire } from "${PACKAGE_NAME}"
import { fastKeyFromSecret } from "${PACKAGE_NAME}/node"

const api = new ApiClient("http://127.0.0.1:1", fastKeyFromSecret(new Uint8Array(32).fill(1)))
export const firstQuestion = async (): Promise<string | undefined> => {
  const market: Market | undefined = unwrap(await api.markets({ order: "volume", limit: 1 })).markets[0]
  return market?.question
}
export const bestBid = (book: BookSnapshot): number | null => book.bids[0]?.price ?? null
export const filled = (r: ApiResult<OrderResponse>): number => (r.status === 200 ? r.body.fills.reduce((n, f) => n + f.size, 0) : 0)
export const strategy: StrategyWire = { mode: "simple", capital_micro_usdc: 1_000_000, preset: "balanced" }
export const frameType = (f: ServerFrame): string => f.type
export const failure = new ApiFailure(429, "rate_limited", undefined, 1)
export const feed = new FeedClient({ url: "ws://127.0.0.1:1/v1/ws", rest: api })
// The types are the API's, not any: tsc must report each of these.
// @ts-expect-error a market has no title
export const title = (m: Market) => m.title
// @ts-expect-error side is "buy" | "sell"
export const bad = () => api.placeOrder({ market_id: "x", side: "long", outcome: "yes", price: 100, size: 1 })
// @ts-expect-error the fast signer takes the secret's bytes
export const badKey = () => fastKeyFromSecret("00")
// @ts-expect-error no such preset
export const badStrategy: StrategyWire = { mode: "simple", capital_micro_usdc: 1, preset: "yolo" }
`
    )
    const strict = { target: "ES2022", strict: true, noEmit: true, skipLibCheck: false, exactOptionalPropertyTypes: true, noUncheckedIndexedAccess: true, types: [] }
    writeFileSync(join(app, "tsconfig.node.json"), JSON.stringify({ compilerOptions: { ...strict, module: "NodeNext", moduleResolution: "NodeNext", lib: ["ES2022"] }, files: ["consumer.ts"] }))
    writeFileSync(
      join(app, "tsconfig.browser.json"),
      JSON.stringify({ compilerOptions: { ...strict, module: "ESNext", moduleResolution: "Bundler", lib: ["ES2022", "DOM"] }, files: ["consumer.ts", "browser-quickstart.ts"] })
    )
    const tsc = join(REPO, "node_modules", "typescript", "bin", "tsc")
    for (const config of ["tsconfig.node.json", "tsconfig.browser.json"]) {
      const r = await run("node", [tsc, "-p", config, "--listFilesOnly"], { cwd: app })
      const files = r.stdout.split("\n").map((f) => relative(app, f))
      expect(files).toContain(`node_modules/${PACKAGE_NAME}/dist/types/client/types.d.ts`) // checked from the installed package
      expect(files.filter((f) => !f.startsWith("node_modules/") && !f.startsWith("..")).sort()).toEqual(config === "tsconfig.node.json" ? ["consumer.ts"] : ["browser-quickstart.ts", "consumer.ts"])
      const check = await run("node", [tsc, "-p", config], { cwd: app })
      expect({ config, out: check.stdout }).toEqual({ config, out: "" })
      expect(check.code).toBe(0)
    }
  }, 300_000)

  it("ships each wire type of src/client/types.ts flattened to the very same type, with no import of effect", () => {
    const dts = join(tmp, "package", "dist", "types", "client", "types.d.ts")
    expect(readFileSync(dts, "utf8")).not.toMatch(/effect|Schema/)
    const names = [...readFileSync(join(REPO, "src", "client", "types.ts"), "utf8").matchAll(/^export (?:type|interface) (\w+)/gm)].map((m) => m[1]!)
    expect(names.length).toBeGreaterThan(40)
    const check = join(tmp, "types-equal.mts") // ESM: the folder has no package.json
    writeFileSync(
      check,
      `import type * as Src from ${JSON.stringify(join(REPO, "src", "client", "types.ts"))}
import type * as Pkg from ${JSON.stringify(dts.replace(/\.d\.ts$/, ".js"))}
type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false
export const same: { ${names.map((n) => `${n}: Equals<Src.${n}, Pkg.${n}>`).join("; ")} } = { ${names.map((n) => `${n}: true`).join(", ")} }
`
    )
    const parsed = ts.getParsedCommandLineOfConfigFile(join(REPO, "tsconfig.json"), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!
    const program = ts.createProgram([check], { ...parsed.options, noUnusedLocals: false })
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"))
    expect(diagnostics).toEqual([])
    // Not vacuous: a type that differs is reported.
    writeFileSync(check, `import type * as Pkg from ${JSON.stringify(dts.replace(/\.d\.ts$/, ".js"))}\ntype Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false\nexport const same: Equals<Pkg.Market, Pkg.OutcomeMarket> = true\n`)
    const differ = ts.getPreEmitDiagnostics(ts.createProgram([check], parsed.options)).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"))
    expect(differ).toEqual(["Type 'true' is not assignable to type 'false'."])
  }, 300_000)

  it("the build refuses a manifest that drifts from the root and a bundle whose imports are not its dependencies", () => {
    const root = { name: "twinbook", version: "1.2.3", engines: { node: ">=20" }, dependencies: { bs58: "6.0.0" } }
    expect(checkManifest({ name: PACKAGE_NAME, version: "1.2.3", engines: { node: ">=20" }, dependencies: { bs58: "6.0.0" } }, root)).toEqual([])
    expect(checkManifest({ name: PACKAGE_NAME, version: "1.0.0", engines: { node: ">=18" }, dependencies: { bs58: "^6.0.0", effect: "3.0.0" } }, root)).toEqual([
      "version 1.0.0 is not the root's 1.2.3",
      "engines.node >=18 is not the root's >=20",
      "dependency bs58@^6.0.0 is not the root's bs58@6.0.0",
      "dependency effect@3.0.0 is not the root's effect@(none)"
    ])
    const out = (imports: Array<{ path: string; external?: boolean }>) => ({ bytes: 1, inputs: {}, exports: [], imports: imports.map((i) => ({ kind: "import-statement" as const, external: i.external ?? true, path: i.path })) })
    const meta = {
      inputs: {},
      outputs: {
        "dist/index.js": out([{ path: "dist/chunks/c.js", external: false }]),
        "dist/chunks/c.js": out([{ path: "@noble/hashes/sha2.js" }, { path: "effect" }, { path: "node:fs" }]),
        "dist/node.js": out([{ path: "node:crypto" }])
      }
    }
    expect(checkExternals(meta, ["@noble/hashes", "bs58"])).toEqual([
      "dist/chunks/c.js imports effect, not a dependency of the package",
      "dependency bs58 is not imported by the bundle",
      "the browser entry reaches node:fs (through dist/chunks/c.js)"
    ])
  })
})
