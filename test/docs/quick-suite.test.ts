// `npm run test:quick` (README) leaves to `npm test` every file that starts another process, a
// chain, a cluster or a browser, or runs whole scenarios, by reading the files: the rule on known
// files of each kind.
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { SLOW_MARKERS, slowFiles } from "../suite/slow-files.ts"

describe("the quick suite's rule", () => {
  const slow = new Set(slowFiles(join(import.meta.dirname, "../..")))

  it("leaves out files with a child process, a chain, a cluster, a browser or whole scenarios", () => {
    for (const f of ["test/ops/process.test.ts", "test/chain/e2e-anvil.test.ts", "test/cluster/failover.test.ts", "test/web/e2e.test.ts", "test/sim/determinism.test.ts", "test/sim/sweep.test.ts", "test/sim/cli.test.ts"]) expect(slow, f).toContain(f)
  })

  it("keeps in-process files: the engine, the API on loopback, the guards", () => {
    for (const f of ["test/engine/differential.test.ts", "test/api/orders.test.ts", "test/determinism/guard.test.ts", "test/hostile/fuzz.test.ts"]) expect(slow, f).not.toContain(f)
  })

  it("each marker matches what it is meant to", () => {
    const samples = ['spawn(process.execPath, ["x"])', 'execFile(process.execPath, ["x"])', "fork(file)", "await runProcess(node, args)", "await startAnvilChain()", "await runScenario(s, {})"]
    for (const s of samples) expect(SLOW_MARKERS.some((re) => re.test(s)), s).toBe(true)
    expect(SLOW_MARKERS.some((re) => re.test("const spawned = 1; runScenarioName()"))).toBe(false)
  })
})
