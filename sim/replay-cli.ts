// `npm run replay -- <log>`: re-executes a simulation log and proves its hashes.
import { readLog } from "./scenario/journal-log.ts"
import { replayRecords } from "./scenario/replay.ts"

const USAGE = "usage: npm run replay -- <log> [--json]"

const main = async (argv: ReadonlyArray<string>): Promise<number> => {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(`${USAGE}\n`)
    return 0
  }
  const json = argv.includes("--json")
  const unknown = argv.find((a) => a.startsWith("-") && a !== "--json")
  if (unknown !== undefined) {
    process.stderr.write(`replay: unknown option ${unknown}\n${USAGE}\n`)
    return 2
  }
  const files = argv.filter((a) => !a.startsWith("--"))
  if (files.length !== 1) {
    process.stderr.write(`${USAGE}\n`)
    return 2
  }
  let loaded
  try {
    loaded = await readLog(files[0]!)
  } catch (err) {
    process.stderr.write(`replay: ${(err as Error).message}\n`)
    return 2
  }
  const { header, records } = loaded
  const r = replayRecords(header, records)
  const ok = r.journalMatches && r.stateMatches && r.violations.length === 0
  if (json) process.stdout.write(`${JSON.stringify({ ok, scenario: header.scenario, seed: header.seed, ...r, expectedJournalHash: header.journalHash, expectedStateHash: header.stateHash })}\n`)
  else {
    process.stdout.write(`replayed ${r.records} records of ${header.scenario} (seed ${header.seed})\n`)
    process.stdout.write(`journalHash ${r.journalHash} ${r.journalMatches ? "= logged" : `!= logged ${header.journalHash}`}\n`)
    process.stdout.write(`stateHash   ${r.stateHash} ${r.stateMatches ? "= logged" : `!= logged ${header.stateHash}`}\n`)
    for (const v of r.violations) process.stdout.write(`invariant: ${v}\n`)
    process.stdout.write(ok ? "OK: same final state\n" : "MISMATCH\n")
  }
  return ok ? 0 : 1
}

process.exitCode = await main(process.argv.slice(2))
