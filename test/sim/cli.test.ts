// `npm run sim` as QA runs it: --duration scales the activity bounds of `expect`, a seed sweep
// reports each seed (in seed order, with both hashes and its log) exactly as single runs do and
// writes a Markdown table, the single-run summary prints both hashes, and a scenario file with a
// JSON syntax error is named with its line and column.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it, vi } from "vitest"
import { formatEta, progressBar } from "../../sim/progress.ts"
import { scaledExpect } from "../../sim/scenario/run.ts"
import { loadScenario } from "../../sim/scenario/scenario.ts"
import { runProcess, type ProcessResult } from "../support/run-process.ts"

const root = join(import.meta.dirname, "..", "..")
const sim = (args: ReadonlyArray<string>): Promise<ProcessResult> =>
  runProcess(process.execPath, ["--max-semi-space-size=64", "scripts/run-ts.mjs", "sim/cli.ts", ...args], { cwd: root, timeoutMs: 120_000 })

describe("--duration scales the expect bounds", () => {
  it("scales activity bounds by duration, rounding down, and leaves per-run bounds alone", () => {
    const busy = loadScenario(join(root, "scenarios/busy-day.json"))
    expect(busy.duration).toBe(86_400)
    const e = scaledExpect(busy, 2 * 3600)
    expect(e.min_fills).toBe(Math.floor((5000 * 2) / 24))
    expect(e.min_withdrawals_confirmed).toBe(0)
    expect(e.min_deposits_credited).toBe(500) // every agent deposits once, at the start
    expect(e.max_5xx).toBe(0)
    expect(scaledExpect(busy, 86_400)).toBe(busy.expect)
  })

  it("busy-day passes at a short --duration (it failed on fills before the bounds scaled)", async () => {
    const r = await sim(["scenarios/busy-day.json", "--duration", "30m", "--no-log", "--json"])
    const s = JSON.parse(r.stdout) as { ok: boolean; failures: string[]; fills: number }
    expect(s.failures).toEqual([])
    expect(r.status).toBe(0)
    expect(s.fills).toBeGreaterThanOrEqual(Math.floor(5000 / 48))
    expect(s.fills).toBeLessThan(5000)
  }, 480_000)
})

describe("seed sweeps", () => {
  it("print one line per seed in seed order with the hashes single runs give, write each log and a table", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sim-sweep-"))
    const args = ["scenarios/deposit-then-trade.json", "--duration", "5m"]
    const r = await sim([...args, "--seeds", "3..5", "--log", dir])
    const seedLines = r.stdout.split("\n").filter((l) => l.startsWith("seed "))
    expect(seedLines.map((l) => l.split(" ")[1])).toEqual(["3", "4", "5"])
    for (const seed of [3, 4, 5]) {
      const line = seedLines[seed - 3]!
      const single = JSON.parse((await sim([...args, "--seed", String(seed), "--json", "--no-log"])).stdout) as { journalHash: string; stateHash: string; ok: boolean }
      expect(line).toBe(`seed ${seed} ${single.ok ? "ok    " : "FAILED"} journalHash ${single.journalHash} stateHash ${single.stateHash} log ${join(dir, `deposit-then-trade-seed${seed}.log`)}`)
      const header = JSON.parse(readFileSync(join(dir, `deposit-then-trade-seed${seed}.log`), "utf8").split("\n")[0]!) as { journalHash: string; stateHash: string }
      expect(header).toMatchObject({ journalHash: single.journalHash, stateHash: single.stateHash })
    }
    expect(r.stdout).toMatch(/^sweep deposit-then-trade: \d\/3 seeds passed, \d failed$/m)
    const table = readFileSync(join(dir, "deposit-then-trade-sweep-3-5.md"), "utf8")
    expect(table).toMatch(/^\| seed \| result \| journalHash \| stateHash \| log \| reproduce \|$/m)
    expect(table.split("\n").filter((l) => /^\| \d /.test(l))).toHaveLength(3)
    expect(r.stdout).toContain(`table ${join(dir, "deposit-then-trade-sweep-3-5.md")}`)
  }, 720_000)

  it("name each failing seed with the command that reproduces it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sim-sweep-fail-"))
    const file = join(dir, "strict.json")
    // deposit-then-trade with a bound no 5-minute run can meet: every seed fails.
    const s = JSON.parse(readFileSync(join(root, "scenarios/deposit-then-trade.json"), "utf8")) as Record<string, unknown>
    writeFileSync(file, JSON.stringify({ ...s, expect: { min_fills: 1_000_000 } }))
    const r = await sim([file, "--duration", "5m", "--seeds", "1,2", "--log", dir])
    expect(r.status).toBe(1)
    expect(r.stdout).toMatch(/^sweep deposit-then-trade: 0\/2 seeds passed, 2 failed$/m)
    // The failure names the bound as scaled and as written.
    expect(r.stdout).toMatch(/^  seed 2 FAILED: expect: fills \d+ < 41666 \(1000000 scaled to 300 s of 7200 s\)$/m)
    expect(r.stdout).toContain(`    reproduce: npm run sim -- ${file} --seed 2 --duration 300s`)
    const table = readFileSync(join(dir, "strict-sweep-1-2.md"), "utf8")
    expect(table).toContain(`reproduce: \`npm run sim -- ${file} --seed 1 --duration 300s\``)
  }, 240_000)
})

describe("seed sweeps with a planted bug", () => {
  it("carry --plant to every seed (a sweep once ran without it) and into each reproduce command", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sim-sweep-plant-"))
    const r = await sim(["scenarios/storage-chaos.json", "--seeds", "2", "--plant", "ignore-bytes-written", "--log", dir])
    expect(r.status, r.stdout).toBe(1)
    expect(r.stdout).toMatch(/^  seed 2 FAILED: .*(acknowledged record seq \d+ \(\w+\) lost|durable records are missing)/m)
    expect(r.stdout).toContain("    reproduce: npm run sim -- scenarios/storage-chaos.json --seed 2 --plant ignore-bytes-written\n")
  }, 240_000)
})

describe("single runs and bad files", () => {
  it("the summary prints the journal and state hashes", async () => {
    const r = await sim(["scenarios/deposit-then-trade.json", "--duration", "5m", "--no-log"])
    expect(r.stdout).toMatch(/^journalHash [0-9a-f]{64}$/m)
    expect(r.stdout).toMatch(/^stateHash [0-9a-f]{64}$/m)
  }, 300_000)

  it("a scenario with a JSON syntax error is named with line and column", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sim-bad-"))
    const file = join(dir, "bad.json")
    writeFileSync(file, '{\n  "name": "x",\n  "seed": 1,\n  "agents": [1,]\n}\n')
    const r = await sim([file])
    expect(r.status).toBe(2)
    expect(r.stderr).toBe(`sim: ${file} is not valid JSON at line 4, column 16: Unexpected token ']'\n    "agents": [1,]\n                 ^\n`)
    writeFileSync(file, '{\n  "name": "x"\n  "seed": 1\n}\n')
    expect((await sim([file])).stderr).toMatch(new RegExp(`^sim: ${file} is not valid JSON at line 3, column 3: Expected ',' or '}' after property value`))
    expect(existsSync(join(root, "out/sim/bad-seed1.log"))).toBe(false)
  })
})

describe("progress bar", () => {
  it("draws at once, before any progress, and shows the time left", () => {
    const writes: string[] = []
    const spy = vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      writes.push(String(chunk))
      return true
    })
    try {
      const bar = progressBar("busy-day seed 7")
      expect(writes).toHaveLength(1)
      expect(writes[0]).toMatch(/^\rbusy-day seed 7 \[\.{30}\] 0% starting eta \?/)
      bar.update(1, "done")
      expect(writes[1]).toMatch(/\] 100% done eta 0s/)
    } finally {
      spy.mockRestore()
    }
    expect([formatEta(42.4), formatEta(185), formatEta(3_720), formatEta(Number.NaN)]).toEqual(["42s", "3m05s", "1h02m", "?"])
  })
})
