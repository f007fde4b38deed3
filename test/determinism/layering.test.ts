// The folders say the layering (DESIGN.md §5, docs/decisions.md § Composition root and use cases),
// and this holds them to it, like the engine's import guard beside it: every folder of src/ and of
// sim/ has a rule naming the folders it may import, and the folders import one another without a
// cycle. So the domain (src/service) knows no transport, store, feed or chain; the pure strategy and
// rewards maths (src/lp) know only the engine; the LP bot's runner (src/workers) reaches the
// placement use case, never a route; use cases sit below the routes; ops never reaches into the
// routes (api imports ops, never the reverse); only the entry point wires the runtime. In sim/ the
// simulated world is the bottom, the agents and the scenario runner stand on it, the work queue
// knows no job kind, and the root holds the entry points nothing imports. sim/ may import src/,
// never the reverse.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, relative, resolve } from "node:path"
import { describe, expect, it } from "vitest"
import { sourceFiles } from "./source-files.ts"

const root = join(import.meta.dirname, "..", "..")

export interface FolderRule {
  /** Folders (top-level, relative to the source root) this folder's files may import; "." is the root's own files. */
  readonly may: ReadonlyArray<string>
  readonly why: string
}

const LEAF = (why: string): FolderRule => ({ may: [], why })

export const RULES: Readonly<Record<string, FolderRule>> = {
  engine: LEAF("the pure matching engine and money arithmetic"),
  domain: LEAF("errors and value types every layer shares"),
  time: LEAF("the clocks"),
  auth: LEAF("keys, signatures, sessions and cookies"),
  lp: { may: ["engine"], why: "the pure strategy, quote and rewards maths (the browser bot and the backtester use it too)" },
  service: { may: ["engine", "lp", "time"], why: "the domain around the engine: no transport, storage, feed or chain; ports are declared here and implemented outside" },
  store: { may: ["engine", "service"], why: "the journal, snapshots and history store persist the domain" },
  chain: { may: ["service"], why: "the chain adapters know the domain, not the routes, the use cases or the wiring" },
  usecase: { may: ["auth", "chain", "domain", "engine", "lp", "service"], why: "use cases sit below the routes and above the domain" },
  workers: { may: ["auth", "domain", "lp", "service", "time", "usecase"], why: "background workers (the LP bot's runner) act through the use cases, never a route" },
  feed: { may: ["auth", "domain", "service", "usecase"], why: "the WebSocket feed reads the domain" },
  ops: { may: ["auth", "chain", "feed", "service", "store", "usecase"], why: "metrics, logs and readiness observe the service; the routes serving them are api's" },
  api: { may: ["auth", "chain", "domain", "feed", "lp", "ops", "service", "time", "usecase"], why: "routes over the use cases; wired by the composition root, never the other way round" },
  deposit: { may: ["api", "auth", "chain", "domain", "service", "usecase"], why: "the deposit service: its own routes on the API's HTTP layer" },
  cluster: { may: ["chain", "domain", "service", "store", "usecase"], why: "the replicated journal, lease and gateway, below the wiring" },
  client: { may: ["api", "auth", "lp"], why: "the typed client: the API's declaration and the signing messages, nothing of the server" },
  runtime: {
    may: ["api", "auth", "chain", "cluster", "deposit", "domain", "feed", "ops", "service", "store", "time", "usecase", "workers"],
    why: "the composition root wires everything"
  },
  ".": { may: ["chain", "runtime", "store", "usecase"], why: "the entry point (main.ts) reads the configuration and starts the runtime" }
}

/** sim/'s folders, bottom up. Any of them may import src/ (what it simulates); none is imported by src/. */
export const SIM_RULES: Readonly<Record<string, FolderRule>> = {
  world: LEAF("the simulated world: seeded randomness, the scheduler and its clocks, network, sockets, disk, the sequencer pair, and the real service on those layers"),
  queue: LEAF("the work queue's generic part (wire contract, caller, worker, job thread): it carries jobs of every kind and imports none; sim/job-thread.ts registers them"),
  agents: { may: ["world"], why: "the simulated users act on the world's network and sockets" },
  scenario: { may: ["agents", "world"], why: "one scenario run: the file format, the runner, faults, the auditor, the run's log, replay and tape" },
  testing: { may: ["scenario", "world"], why: "planted bugs are run options that tamper with the world's disk or log" },
  sweep: { may: ["queue", "scenario", "testing"], why: "a seed sweep of runs, on local threads or as the work queue's sim jobs" },
  backtest: { may: ["queue", "world"], why: "the backtester: the world's seeded randomness only, and its own job kind on the queue" },
  fidelity: { may: ["backtest", "scenario", "world"], why: "a backtest measured against the live world it replays" },
  ".": { may: ["agents", "backtest", "fidelity", "queue", "scenario", "sweep", "testing", "world"], why: "the entry points (CLIs, the job thread's table), which nothing imports" }
}

/** Every relative import/export-from/dynamic import of a file, resolved to a path. */
const importsOf = (file: string): string[] =>
  [...readFileSync(file, "utf8").matchAll(/(?:from\s+|import\s*\(\s*|import\s+)"(\.{1,2}\/[^"]+)"/g)].map((m) => resolve(dirname(file), m[1]!))

/** The top-level folder of a path under srcRoot ("." for a file at the root). */
const folderOf = (srcRoot: string, path: string): string => {
  const parts = relative(srcRoot, path).split("/")
  return parts.length === 1 ? "." : parts[0]!
}

/** Folder → folder → the imports that cross between them, over every source file under srcRoot. */
export const folderGraph = (srcRoot: string): Map<string, Map<string, string[]>> => {
  const graph = new Map<string, Map<string, string[]>>()
  for (const file of sourceFiles(srcRoot)) {
    const from = folderOf(srcRoot, file)
    const edges = graph.get(from) ?? new Map<string, string[]>()
    graph.set(from, edges)
    for (const target of importsOf(file)) {
      if (relative(srcRoot, target).startsWith("..")) continue
      const to = folderOf(srcRoot, target)
      if (to !== from) edges.set(to, [...(edges.get(to) ?? []), `${relative(srcRoot, file)} imports ${relative(srcRoot, target)}`])
    }
  }
  return graph
}

/** `file imports path (why)` for each import its folder's rule does not allow, and each folder with no rule (named `label/folder`). */
export const layeringViolations = (srcRoot: string, rules: Readonly<Record<string, FolderRule>> = RULES, label = "src"): string[] => {
  const folders = [".", ...readdirSync(srcRoot).filter((n) => statSync(join(srcRoot, n)).isDirectory())]
  const graph = folderGraph(srcRoot)
  return folders.flatMap((folder) => {
    const rule = rules[folder]
    if (rule === undefined) return [`${label}/${folder} has no layering rule: add one to test/determinism/layering.test.ts`]
    return [...(graph.get(folder) ?? new Map<string, string[]>())].flatMap(([to, lines]) =>
      rule.may.includes(to) ? [] : lines.map((l) => `${l} (${folder} may import only ${rule.may.join(", ") || `nothing of ${label}`}: ${rule.why})`)
    )
  })
}

/** The folder cycles (strongly connected components of two or more), each with the imports that close it. */
export const folderCycles = (srcRoot: string): string[] => {
  const graph = folderGraph(srcRoot)
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const cycles: string[][] = []
  const visit = (v: string): void => {
    index.set(v, index.size)
    low.set(v, index.get(v)!)
    stack.push(v)
    for (const w of (graph.get(v) ?? new Map()).keys()) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = []
      for (let w = stack.pop()!; ; w = stack.pop()!) {
        scc.push(w)
        if (w === v) break
      }
      if (scc.length > 1) cycles.push(scc.sort())
    }
  }
  for (const v of graph.keys()) if (!index.has(v)) visit(v)
  return cycles.map((c) => `{${c.join(", ")}}: ${c.flatMap((a) => c.flatMap((b) => (graph.get(a)?.get(b) ?? []).slice(0, 1))).join("; ")}`)
}

describe("layering", () => {
  it("every folder of src/ has a rule, and imports only what its rule allows", () => {
    expect(sourceFiles(join(root, "src", "service")).length).toBeGreaterThan(0)
    expect(layeringViolations(join(root, "src"))).toEqual([])
  })

  it("the folders of src/ import one another without a cycle", () => {
    expect(folderCycles(join(root, "src"))).toEqual([])
  })

  it("every folder of sim/ has a rule, and imports only what its rule allows", () => {
    expect(sourceFiles(join(root, "sim", "world")).length).toBeGreaterThan(0)
    expect(layeringViolations(join(root, "sim"), SIM_RULES, "sim")).toEqual([])
  })

  it("the folders of sim/ import one another without a cycle, and none imports sim/'s root (the entry points)", () => {
    expect(folderCycles(join(root, "sim"))).toEqual([])
    expect(Object.entries(SIM_RULES).filter(([folder, rule]) => folder !== "." && rule.may.includes("."))).toEqual([])
  })

  it("src/ imports nothing of sim/ (the simulator stands on the service, never the reverse)", () => {
    const sim = join(root, "sim") + "/"
    const bad = sourceFiles(join(root, "src")).flatMap((f) => importsOf(f).filter((t) => t.startsWith(sim)).map((t) => `${relative(root, f)} imports ${relative(root, t)}`))
    expect(bad).toEqual([])
  })

  it("inside src/, only the entry point (src/main.ts) imports the composition root", () => {
    const files = sourceFiles(join(root, "src")).filter((f) => !f.startsWith(join(root, "src", "runtime")) && f !== join(root, "src", "main.ts"))
    const bad = files.flatMap((f) => importsOf(f).filter((t) => t.startsWith(join(root, "src", "runtime") + "/")).map((t) => `${relative(root, f)} imports ${relative(root, t)}`))
    expect(bad).toEqual([])
  })

  it("the rules themselves catch a crossing import, an export-from, a dynamic import, a folder without a rule and a cycle, and pass a clean tree", () => {
    const src = mkdtempSync(join(tmpdir(), "layering-"))
    const rules: Record<string, FolderRule> = {
      ".": { may: [], why: "root" },
      service: { may: ["engine"], why: "domain" },
      api: { may: ["service"], why: "routes" },
      chain: { may: ["service"], why: "chain" },
      lp: { may: [], why: "pure" }
    }
    for (const dir of ["service", "api", "chain", "lp"]) mkdirSync(join(src, dir))
    writeFileSync(join(src, "api", "route.ts"), 'import { s } from "../service/ok.ts"\nexport const r = 1\n')
    writeFileSync(join(src, "chain", "guard.ts"), "export class ChainGuard {}\n")
    writeFileSync(join(src, "service", "ok.ts"), 'import { x } from "./other.ts"\nimport type { E } from "../engine/types.ts"\n')
    expect(layeringViolations(src, rules)).toEqual([])
    expect(folderCycles(src)).toEqual([])
    writeFileSync(join(src, "service", "exchange.ts"), 'import type { ChainGuard } from "../chain/guard.ts"\n')
    writeFileSync(join(src, "service", "again.ts"), 'export { r } from "../api/route.ts"\nconst m = await import("../chain/guard.ts")\n')
    writeFileSync(join(src, "lp", "bot.ts"), 'import { r } from "../api/route.ts"\n')
    mkdirSync(join(src, "newfolder"))
    expect(layeringViolations(src, rules).map((v) => v.replace(/ \(.*$/, "")).sort()).toEqual([
      "lp/bot.ts imports api/route.ts",
      "service/again.ts imports api/route.ts",
      "service/again.ts imports chain/guard.ts",
      "service/exchange.ts imports chain/guard.ts",
      "src/newfolder has no layering rule: add one to test/determinism/layering.test.ts"
    ])
    expect(layeringViolations(src, rules, "sim").filter((v) => v.includes("no layering rule"))).toEqual(["sim/newfolder has no layering rule: add one to test/determinism/layering.test.ts"])
    // service → chain → service and service → api → service: one component of three folders.
    writeFileSync(join(src, "chain", "guard.ts"), 'import { s } from "../service/ok.ts"\nexport class ChainGuard {}\n')
    expect(folderCycles(src).map((c) => c.replace(/:.*$/, ""))).toEqual(["{api, chain, service}"])
  })
})
