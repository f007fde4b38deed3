// The worker pool of `npm run fidelity` (sim/fidelity/pool.ts): a job that fails on its input
// inside a worker thread (here a leave-one-out fit with no calibration tapes to read) comes back
// as a BacktestInputError of one line naming the job, which the command prints as one line
// (exit 2), not as a stack trace; the error's class does not cross the thread by itself.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { BacktestInputError } from "../../sim/backtest/dataset.ts"
import { pool } from "../../sim/fidelity/pool.ts"
import type { FidelityJob } from "../../sim/fidelity/worker.ts"

describe("the fidelity worker pool", () => {
  it("gives a job's input error as one line of its own class, after every job ran", async () => {
    const out = mkdtempSync(join(tmpdir(), "fidelity-pool-"))
    try {
      const jobs: FidelityJob[] = [1, 2].map((seed) => ({ kind: "fit-leaving-out", seed, out, seeds: [1, 2], horizon: 1800 }) as const)
      const results: unknown[] = []
      const err = await pool({ file: "scenarios/liquidity-midnight.json", snapshotSec: 0, workers: 2 }, jobs, (_j, r) => void results.push(r)).then(() => null, (e: unknown) => e)
      expect(err).toBeInstanceOf(BacktestInputError)
      const message = (err as Error).message
      expect(message).not.toContain("\n")
      // Both jobs failed, each named with the tape it could not read (the other seed's).
      expect(message).toContain(`fit-leaving-out seed 1: fit-response: ${join(out, "calibration", "seed2-live")} is not a tape directory`)
      expect(message).toContain(`fit-leaving-out seed 2: fit-response: ${join(out, "calibration", "seed1-live")} is not a tape directory`)
      expect(results).toEqual([])
    } finally {
      rmSync(out, { recursive: true, force: true })
    }
  })
})
