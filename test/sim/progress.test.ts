// The progress of a run counts all the virtual time it simulates — the scenario's duration, the
// drain and the quiet tail — and reaches 100% only at the end (issue 34 item 15: the bar read 100%
// at 420 s of a 450 s run, the drain's end). Seen twice: the reports runScenario makes, and the bar
// `npm run sim` draws on a real terminal (a pseudo-terminal from util-linux `script`).
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { runScenario } from "../../sim/scenario/run.ts"
import { loadScenario } from "../../sim/scenario/scenario.ts"
import { childEnv } from "../support/queue-worker.ts"
import { runProcess } from "../support/run-process.ts"

const root = join(import.meta.dirname, "..", "..")

describe("run progress", () => {
  it("each report is the virtual time done of the whole run; only the last, at the run's end, is 1", async () => {
    const scenario = loadScenario(join(root, "scenarios/deposit-then-trade.json"))
    const reports: Array<{ fraction: number; virtualSec: number }> = []
    const s = await runScenario(scenario, { seed: 1, durationSec: 1800, expectations: false, onProgress: (fraction, virtualSec) => reports.push({ fraction, virtualSec }) })
    expect(s.failures).toEqual([])
    expect(reports.length).toBeGreaterThan(2)
    const last = reports.at(-1)!
    expect(last).toEqual({ fraction: 1, virtualSec: s.virtualSec })
    for (const r of reports.slice(0, -1)) {
      expect(Math.floor(r.fraction * 100), `${r.virtualSec} s of ${s.virtualSec} s`).toBeLessThan(100)
      expect(r.fraction).toBeCloseTo(r.virtualSec / s.virtualSec, 3)
    }
  }, 120_000)

  it("the bar on a terminal reads 100% once, with the virtual seconds the summary prints", async () => {
    const cmd = `${process.execPath} --max-semi-space-size=64 scripts/run-ts.mjs sim/cli.ts scenarios/deposit-then-trade.json --duration 60s --no-log`
    const r = await runProcess("script", ["-qec", cmd, "/dev/null"], { cwd: root, env: childEnv(), timeoutMs: 120_000 })
    expect(r.status, r.stdout).toBe(0)
    const frames = [...r.stdout.matchAll(/\] (\d+)% ([\d,]+) s virtual eta/g)].map((m) => ({ percent: Number(m[1]), virtualSec: Number(m[2]!.replaceAll(",", "")) }))
    const summary = /^ {2}virtual ([\d,]+) s in /m.exec(r.stdout)
    expect(summary, r.stdout).not.toBeNull()
    const virtualSec = Number(summary![1]!.replaceAll(",", ""))
    expect(virtualSec).toBe(60 + 120 + 30) // the duration, the drain, the quiet tail
    expect(frames.filter((f) => f.percent === 100)).toEqual([{ percent: 100, virtualSec }])
    expect(frames.at(-1)).toEqual({ percent: 100, virtualSec })
  }, 120_000)
})
