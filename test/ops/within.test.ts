// The ops probes' bound (src/ops/within.ts, Effect.timeoutFail): a value or the Promise's own error
// passes through; a Promise that never settles is cut at the bound with the caller's message. Then
// the two probes using it, each against a dependency that never answers: readiness names the
// journal sync it gave up on, the chain probe the head that never came. (A never-settling Promise
// is cut whatever the machine's speed: these outcomes do not depend on timing.)
import { describe, expect, it } from "vitest"
import { chainProbe } from "../../src/ops/chain-probe.ts"
import { readiness } from "../../src/ops/readiness.ts"
import { within } from "../../src/ops/within.ts"

const never = <A>(): Promise<A> => new Promise<A>(() => {})

describe("within", () => {
  it("gives the value, or the Promise's own error", async () => {
    expect(await within(() => Promise.resolve(7), 1_000, () => new Error("late"))).toBe(7)
    const own = new Error("refused")
    await expect(within(() => Promise.reject(own), 1_000, () => new Error("late"))).rejects.toBe(own)
  })

  it("cuts a Promise that never settles, with the caller's error", async () => {
    await expect(within(never, 20, () => new Error("journal sync did not finish within 20 ms"))).rejects.toThrow("journal sync did not finish within 20 ms")
  })

  it("bounds readiness's journal sync and the chain probe's head", async () => {
    const probe = chainProbe({ chain: { head: never }, watcher: { scannedThroughBlock: 0n, passed: true }, guard: { isHalted: false, deciding: false }, timeoutMs: 20 })
    expect(await probe.probe()).toEqual({ head: null, lagBlocks: null, halted: false, checked: true, deciding: false, error: "no answer within 20 ms" })
    const report = await readiness({ journal: { sync: never }, maxLagBlocks: 5, timeoutMs: 20, chain: probe })()
    expect(report.status).toBe("not_ready")
    expect(report.checks.journal).toEqual({ ok: false, detail: expect.stringContaining("journal sync did not finish within 20 ms") })
    expect(report.checks.chain).toEqual({ ok: false, detail: "unreachable: no answer within 20 ms" })
  })
})
