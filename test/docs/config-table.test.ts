// One declared configuration (src/runtime/config.ts, issue 35 item 3): README's variable table and
// docs/cluster.md's are what the declaration generates (`npm run docs:config`); every variable src/
// reads is declared there and read nowhere else; each role's configuration reads exactly the
// variables its table lists, and a malformed value fails naming its variable.
import { readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { Cause, ConfigProvider, Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { configuration, TABLE_FILES, VARIABLES, withTable } from "../../src/runtime/config.ts"
import { sourceFiles } from "../determinism/source-files.ts"

const ROOT = join(import.meta.dirname, "..", "..")
const CONFIG_FILE = "src/runtime/config.ts"

/** The configuration read from `env`, with every variable name it asked for. */
const read = (env: Record<string, string>) => {
  const asked = new Set<string>()
  const provider = ConfigProvider.fromMap(new Map(Object.entries(env))).pipe(
    ConfigProvider.mapInputPath((name) => {
      asked.add(name)
      return name
    })
  )
  const exit = Effect.runSyncExit(Effect.withConfigProvider(configuration, provider))
  return { exit, asked, error: Exit.isFailure(exit) ? Cause.pretty(exit.cause) : null }
}

/** What a cluster role needs to start reading past its required variables. */
const CLUSTER_REQUIRED = { NATS_URL: "nats://127.0.0.1:4222", ADMIN_TOKEN: "t", SESSION_SECRET: "ab".repeat(32) }

/** The variable names a source text reads: `process.env` reads and `Config.<kind>("NAME")`. */
export const namesRead = (text: string): string[] => [
  ...[...text.matchAll(/process\.env(?:\[\s*["'`]([A-Z0-9_]+)["'`]\s*\]|\.([A-Z0-9_]+))/g)].map((m) => m[1] ?? m[2]!),
  ...[...text.matchAll(/Config\.(?:string|integer|number|boolean|redacted|secret|url|port|literal\([^)]*\))\(\s*"([A-Z0-9_]+)"/g)].map((m) => m[1]!)
]

/** Every variable name src/ reads, with the file. */
const readsInSrc = (): Array<{ name: string; file: string }> =>
  sourceFiles(join(ROOT, "src")).flatMap((path) => namesRead(readFileSync(path, "utf8")).map((name) => ({ name, file: relative(ROOT, path) })))

describe("the variable tables", () => {
  it.each(TABLE_FILES)("$file's table is the one src/runtime/config.ts generates (npm run docs:config)", ({ file, table }) => {
    const doc = readFileSync(join(ROOT, file), "utf8")
    const generated = withTable(doc, table)
    expect(generated, `${file} has no generated table between the config-table markers`).not.toBeNull()
    expect(doc).toBe(generated)
  })

  it("README's table names every variable of the single process; docs/cluster.md's the cluster roles' own", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8")
    const cluster = readFileSync(join(ROOT, "docs/cluster.md"), "utf8")
    for (const v of VARIABLES) expect(v.table === "readme" ? readme : cluster).toContain(`| \`${v.name}\` |`)
    expect(VARIABLES.length).toBeGreaterThan(40)
  })
})

describe("the declaration", () => {
  it("holds every variable src/ reads, and src/ reads them in src/runtime/config.ts only (or where the declaration says)", () => {
    const declared = new Map(VARIABLES.map((v) => [v.name, v]))
    const reads = readsInSrc()
    expect(reads.map((r) => r.name)).toContain("ANVIL_BIN")
    const undeclared = reads.filter((r) => !declared.has(r.name)).map((r) => `${r.file} reads ${r.name}, which src/runtime/config.ts does not declare`)
    const elsewhere = reads
      .filter((r) => declared.has(r.name) && r.file !== CONFIG_FILE && declared.get(r.name)!.readIn !== r.file)
      .map((r) => `${r.file} reads ${r.name}: declare and read it in ${CONFIG_FILE}`)
    expect([...undeclared, ...elsewhere]).toEqual([])
  })

  it("the scan finds each way of reading a variable", () => {
    const sample = 'process.env.A_1; process.env["B"]; Config.integer("C"); Config.literal("x", "y")("D"); Config.option(Config.redacted("E")); Config.string(name)'
    expect(namesRead(sample)).toEqual(["A_1", "B", "C", "D", "E"])
  })

  it("each doc line says something, and each name is declared once per table", () => {
    for (const v of VARIABLES) {
      expect(v.doc.length, v.name).toBeGreaterThan(10)
      expect(v.shownDefault, v.name).not.toBe("")
    }
    const keys = VARIABLES.map((v) => `${v.table}:${v.name}`)
    expect(new Set(keys).size).toBe(keys.length)
  })
})

describe("the configuration, read", () => {
  const tableNames = (table: "readme" | "cluster") => VARIABLES.filter((v) => v.table === table && v.readIn === undefined).map((v) => v.name)
  const CLUSTER_ONLY = new Set(tableNames("cluster").filter((n) => !tableNames("readme").includes(n)))
  const SINGLE_ONLY = ["DATA_DIR", "WEB", "WEB_PORT", "SNAPSHOT_INTERVAL_SEC"]

  it("ROLE=single reads exactly README's variables, with their documented defaults", () => {
    const { exit, asked } = read({})
    expect(Exit.isSuccess(exit)).toBe(true)
    expect([...asked].sort()).toEqual(tableNames("readme").sort())
    const c = Exit.isSuccess(exit) ? exit.value : null
    expect(c?.role).toBe("single")
    if (c?.role !== "single") return
    expect({ host: c.common.host, port: c.common.port, dataDir: c.single.dataDir, web: c.single.web, snapshotIntervalSec: c.single.snapshotIntervalSec }).toEqual({
      host: "127.0.0.1",
      port: 8080,
      dataDir: "./data",
      web: { enabled: true, port: 3000 },
      snapshotIntervalSec: 300
    })
    expect(c.common.app.limits).toEqual({
      registrationsPerMinute: 30,
      wsConnectionsPerAddress: 50,
      wsSubscriptionsPerConnection: 500,
      wsConnections: 1000,
      wsSubscriptions: 10_000,
      wsBufferedBytes: 32 * 1024 * 1024,
      rateLimitBuckets: 250_000
    })
    expect(c.chain.side).toMatchObject({ depositPort: 8081, confirmations: 0, pollMs: 1000, headPollMs: 100, minUsdgMicro: 1_000_000, maxPerTxMicro: 100_000_000 })
  })

  it.each(["sequencer", "gateway"])("ROLE=%s reads what every role shares, the chain and docs/cluster.md's variables, not the single process's", (role) => {
    const { exit, asked } = read({ ROLE: role, ...CLUSTER_REQUIRED })
    expect(Exit.isSuccess(exit)).toBe(true)
    const expected = [...tableNames("readme").filter((n) => !SINGLE_ONLY.includes(n)), ...CLUSTER_ONLY]
    expect([...asked].sort()).toEqual([...new Set(expected)].sort())
  })

  it("a cluster role without its required variables fails naming the first missing one", () => {
    expect(read({ ROLE: "gateway" }).error).toContain("NATS_URL")
    expect(read({ ROLE: "gateway", ...CLUSTER_REQUIRED, SESSION_SECRET: "12" }).error).toContain('Invalid data at SESSION_SECRET: "SESSION_SECRET must be at least 32 bytes in hex')
  })

  // Free text: any value is one. Every other variable has a form a malformed value breaks.
  const FREE_TEXT = new Set(["HOST", "CORS_ORIGINS", "DATA_DIR", "ADMIN_TOKEN", "CHAIN_RPC_URL", "CHAIN_ANVIL_STATE", "NATS_URL", "NODE_NAME"])
  const checked = VARIABLES.filter((v) => v.readIn === undefined && !FREE_TEXT.has(v.name))

  it.each(checked.map((v) => [v.name, v.table] as const))("a malformed %s fails the start naming it", (name, table) => {
    const base = table === "cluster" || name === "ROLE" ? { ROLE: "gateway", ...CLUSTER_REQUIRED } : {}
    const { error } = read({ ...base, [name]: "x!" })
    expect(error).toMatch(new RegExp(`Invalid data at ${name}\\b`))
  })
})
