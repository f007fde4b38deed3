// A run's log replays to the same journal and state hashes; a tampered log does not.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { LOG_FORMAT, LOG_VERSION, readLog, writeLog } from "../../sim/scenario/journal-log.ts"
import { replayRecords } from "../../sim/scenario/replay.ts"
import { runScenario } from "../../sim/scenario/run.ts"
import type { JournalRecord } from "../../src/service/commands.ts"
import { shippedScenarios } from "./support.ts"

describe("replay", () => {
  it("re-executes a crash scenario's log to the same hashes, and detects tampering", async () => {
    const scenario = shippedScenarios().find((s) => s.scenario.name === "crash-recovery")!.scenario
    const s = await runScenario(scenario, { durationSec: 2_000, expectations: false })
    expect(s.crashes).toBeGreaterThan(0)
    const path = join(mkdtempSync(join(tmpdir(), "replay-")), "run.log")
    const header = { format: LOG_FORMAT, version: LOG_VERSION, scenario: s.scenario, seed: s.seed, startSec: s.startSec, records: s.records.length, journalHash: s.journalHash, stateHash: s.stateHash } as const
    writeLog(path, header, s.records as JournalRecord[])
    const { header: h, records } = await readLog(path)
    const r = replayRecords(h, records)
    expect(r).toMatchObject({ journalMatches: true, stateMatches: true, violations: [] })
    expect(r.stateHash).toBe(s.stateHash)

    // Change one deposit's amount: both hashes move.
    const i = records.findIndex((rec) => rec.cmd.type === "deposit_detected")
    const rec = records[i]!
    if (rec.cmd.type !== "deposit_detected") throw new Error("unreachable")
    records[i] = { ...rec, cmd: { ...rec.cmd, amountMicro: rec.cmd.amountMicro + 1 } }
    const tampered = replayRecords(h, records)
    expect(tampered.journalMatches).toBe(false)
    expect(tampered.stateMatches).toBe(false)

    // A truncated file is refused with a clear message.
    const text = readFileSync(path, "utf8").split("\n")
    writeFileSync(path, text.slice(0, 10).join("\n"))
    await expect(readLog(path)).rejects.toThrow(/header promises .* records, file holds 9/)
  }, 60_000)
})
