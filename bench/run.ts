// `npm run bench -- [suite] [--json] [suite flags]`
// With no suite, every registered suite runs in registration order.
// Benches report; they never fail on a missed target (tests assert, benches print).
import { type BenchResult, formatTables, type Suite } from "./lib.ts"

// One line per suite. Lazy imports keep one suite's setup (and dependencies)
// out of another's process and timings.
const SUITES: Record<string, () => Promise<Suite>> = {
  engine: async () => (await import("./engine.ts")).engineSuite,
  api: async () => (await import("./api.ts")).apiSuite,
  http: async () => (await import("./book-read.ts")).bookReadSuite,
  journal: async () => (await import("./journal.ts")).journalSuite,
  recovery: async () => (await import("./journal.ts")).recoverySuite,
  history: async () => (await import("./history.ts")).historySuite,
  chain: async () => (await import("./chain.ts")).chainSuite,
  deposit: async () => (await import("./deposit-latency.ts")).depositLatencySuite,
  sim: async () => (await import("./sim.ts")).simSuite,
  backtest: async () => (await import("./backtest.ts")).backtestSuite,
  web: async () => (await import("./web.ts")).webSuite,
  "ws-storm": async () => (await import("./ws-storm.ts")).wsStormSuite,
  "cluster-log": async () => (await import("./cluster-log.ts")).clusterLogSuite,
  cluster: async () => (await import("./cluster.ts")).clusterSuite
}

const USAGE = `usage: npm run bench -- [${Object.keys(SUITES).join("|")}] [--json] [suite flags]`

const main = async (argv: ReadonlyArray<string>): Promise<number> => {
  const json = argv.includes("--json")
  const positional = argv.filter((a) => !a.startsWith("--"))
  const flags = argv.filter((a) => a.startsWith("--") && a !== "--json")
  if (flags.includes("--help")) {
    process.stdout.write(`${USAGE}\n`)
    return 0
  }
  if (positional.length > 1) {
    process.stderr.write(`bench: one suite at a time (got ${positional.join(", ")})\n${USAGE}\n`)
    return 2
  }
  const wanted = positional.length === 0 ? Object.keys(SUITES) : positional
  for (const name of wanted) {
    if (!Object.hasOwn(SUITES, name)) {
      process.stderr.write(`bench: unknown suite "${name}"; known: ${Object.keys(SUITES).join(", ")}\n${USAGE}\n`)
      return 2
    }
  }
  for (const name of wanted) {
    const suite = await SUITES[name]!()
    const results: BenchResult[] = []
    const report = (r: BenchResult): void => {
      results.push(r)
      if (json) process.stdout.write(`${JSON.stringify(r)}\n`)
    }
    const log = (message: string): void => void process.stderr.write(`[${name}] ${message}\n`)
    await suite({ args: flags, report, log })
    if (!json) process.stdout.write(`\n== ${name} ==\n${formatTables(results)}\n`)
  }
  return 0
}

process.exitCode = await main(process.argv.slice(2))
