// `npm run sim:hashes` as docs/simulation.md "Golden hashes" documents it: `--write` records the
// whole table, so it refuses a subset (file names or `--seeds`) that would overwrite the recorded
// file with a few rows, and leaves the file untouched.
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { HASHES_FILE } from "../../scripts/scenario-hashes.ts"
import { childEnv } from "../support/queue-worker.ts"
import { runProcess } from "../support/run-process.ts"

const root = join(import.meta.dirname, "..", "..")
const hashes = (args: ReadonlyArray<string>) =>
  runProcess(process.execPath, ["--max-semi-space-size=64", "scripts/run-ts.mjs", "scripts/scenario-hashes.ts", ...args], { cwd: root, env: childEnv(), timeoutMs: 60_000 })

describe("npm run sim:hashes subsets", () => {
  it("--write refuses a subset (file names or --seeds) and leaves the recorded table as it was", async () => {
    const before = readFileSync(HASHES_FILE, "utf8")
    for (const subset of [["--seeds", "1"], ["scenarios/storage-chaos.json"]]) {
      const r = await hashes(["--write", ...subset])
      expect(r.status, r.stderr).toBe(2)
      expect(r.stderr).toBe("sim:hashes: --write records every scenario at seeds 1..3; give no file names and no --seeds\n")
      expect(r.stdout).toBe("")
    }
    expect(readFileSync(HASHES_FILE, "utf8")).toBe(before)
  }, 240_000)
})
