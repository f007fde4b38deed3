import { defineConfig } from "vitest/config"
import { LongestFirst } from "./test/suite/sequencer.ts"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Hang bounds, not speed targets: a CPU-bound test took up to 56 s of the old 60 s bound in a
    // run at load 20 (issue 31, run 25), so a test fails only when it hangs, never when the machine is busy.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // Two workers for CI's two cores. A third (for the files that mostly wait on NATS, a page or a
    // block) saved 7% in one run and starved the NATS processes into a 20 s failover (issue 31 run 32).
    pool: "forks",
    // Files share each worker's module graph instead of importing it again per file: importing
    // took 240–290 s of the suite's CPU (issue 35 item 6). Tests restore what they change
    // (process.env, timers); a test that starts a service starts its own.
    isolate: false,
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    // Longest files first, so the two workers end together (test/suite/sequencer.ts).
    sequence: { sequencer: LongestFirst }
  }
})
