// Market regimes for fidelity (docs/backtesting.md "Regimes"): a scenario's fee schedule is set
// by the operator before trading and takers price the fee in (sim/agents/traders.ts), so a fee
// world trades differently from a free one; the hidden probability can jump on news
// (sim/world/truth.ts), and a scenario without jumps keeps its random stream.
import { join } from "node:path"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { allInBps, netOfFeeBps } from "../../sim/agents/traders.ts"
import { Rng } from "../../sim/world/random.ts"
import { userOfAgent } from "../../sim/fidelity/realised.ts"
import { agentNames, runScenario } from "../../sim/scenario/run.ts"
import { loadScenario } from "../../sim/scenario/scenario.ts"
import { Scheduler } from "../../sim/world/scheduler.ts"
import { Truth } from "../../sim/world/truth.ts"
import { FEE_ACCOUNT } from "../../src/engine/money.ts"
import { SCENARIO_DIR } from "./support.ts"

describe("takers price the fee in", () => {
  it("the limit is the highest price whose cost with the engine's fee (rounded up) stays within what the taker would pay", () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 9_999 }), fc.integer({ min: 1, max: 1_000 }), (willingBps, feeBps) => {
        const limit = netOfFeeBps(willingBps, feeBps)
        expect(allInBps(limit, feeBps)).toBeLessThanOrEqual(willingBps)
        expect(allInBps(limit + 1, feeBps)).toBeGreaterThan(willingBps)
      })
    )
    // A 50 bps fee on a 60¢ contract is 0.3¢: the taker bids 59.7¢ to pay at most 60¢.
    expect(netOfFeeBps(6_000, 50)).toBe(5_970)
    expect(allInBps(5_970, 50)).toBe(6_000)
  })

  it("with no fee the limit is the price itself, so fee-free scenarios keep their orders", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 9_999 }), (p) => netOfFeeBps(p, 0) === p && allInBps(p, 0) === p))
  })
})

/**
 * A 30-minute run of a scenario object: the fees the engine collected, the rebates it paid, and
 * the prices of the noise traders' orders (their willing prices are whole multiples of 10 bps).
 */
const feeRun = async (scenario: ReturnType<typeof loadScenario>) => {
  let takerFeesMicro = 0
  let rebatesMicro = 0
  let feeAccountMicro = 0
  const noise = new Set(agentNames(scenario).filter((n) => n.startsWith("noise-")).map((n) => userOfAgent(1, n)))
  const noisePricesBps: number[] = []
  const s = await runScenario(scenario, {
    seed: 1,
    durationSec: 1_800,
    expectations: false,
    onWorld: (world) =>
      world.onBoot((x) =>
        x.onApply((record, result) => {
          if (record.cmd.type === "place_order" && noise.has(record.cmd.order.user)) noisePricesBps.push(record.cmd.order.priceBps)
          for (const ev of result.events) {
            if (ev.type !== "fill") continue
            takerFeesMicro += ev.takerFeeMicro
            rebatesMicro += ev.makerRebateMicro
          }
          feeAccountMicro = x.engine.accounts.get(FEE_ACCOUNT)?.availableMicro ?? 0
        })
      )
  })
  return { s, takerFeesMicro, rebatesMicro, feeAccountMicro, noisePricesBps }
}

describe("a fee regime", () => {
  it("liquidity-midnight-fees charges 50 bps to takers and pays makers 20 bps out of it, and its takers trade otherwise than in a free world", async () => {
    const fees = loadScenario(join(SCENARIO_DIR, "liquidity-midnight-fees.json"))
    const { fees: _dropped, ...free } = fees
    const [withFees, withoutFees] = await Promise.all([feeRun(fees), feeRun(free)])
    expect(withFees.s.failures).toEqual([])
    expect(withFees.s.fills).toBeGreaterThan(0)
    expect(withFees.takerFeesMicro).toBeGreaterThan(0)
    expect(withFees.rebatesMicro).toBeGreaterThan(0)
    // Rebates come out of the fees collected: what is left is the fee account's.
    expect(withFees.feeAccountMicro).toBe(withFees.takerFeesMicro - withFees.rebatesMicro)
    // The free world charges nothing and pays no rebate (the engine's default 5 bps comes only out of fees).
    expect(withoutFees.takerFeesMicro).toBe(0)
    expect(withoutFees.rebatesMicro).toBe(0)
    // Takers price the fee in: free, every noise price is a willing price (a multiple of 10 bps);
    // with the fee, each is the highest limit within it, which almost never is.
    const offTick = (prices: number[]): number => prices.filter((p) => p % 10 !== 0).length
    expect(withoutFees.noisePricesBps.length).toBeGreaterThan(20)
    expect(offTick(withoutFees.noisePricesBps)).toBe(0)
    expect(withFees.noisePricesBps.length).toBeGreaterThan(20)
    expect(offTick(withFees.noisePricesBps)).toBeGreaterThan(withFees.noisePricesBps.length * 0.8)
  }, 240_000)
})

/** The largest one-minute move of market 0's hidden probability over `minutes`, in bps. */
const largestStepBps = async (jumps: { perHour: number; size: number } | undefined, minutes: number): Promise<number> => {
  const scheduler = new Scheduler(0)
  const truth = new Truth(scheduler, new Rng("truth-test"), 1, [5_000, 5_000], 0.1, jumps)
  let prev = truth.bps(0)
  let largest = 0
  for (let m = 1; m <= minutes; m++) {
    await scheduler.run(m * 60_000)
    largest = Math.max(largest, Math.abs(truth.bps(0) - prev))
    prev = truth.bps(0)
  }
  return largest
}

describe("jumps of the hidden probability", () => {
  it("a walk with news jumps moves far more in a minute than the walk alone; without jumps the walk draws exactly as before", async () => {
    const walk = await largestStepBps(undefined, 600)
    // 0.1 logits per √hour is about 0.013 logits a minute: around 50%, a few tens of bps at most.
    expect(walk).toBeLessThan(150)
    expect(await largestStepBps({ perHour: 6, size: 1 }, 600)).toBeGreaterThan(1_000)
    // Jumps configured with size 0 draw nothing extra: the very same walk.
    expect(await largestStepBps({ perHour: 6, size: 0 }, 600)).toBe(walk)
  })
})
