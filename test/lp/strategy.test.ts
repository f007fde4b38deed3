// The LP quoting strategy: hand-computed ladders for each behaviour (symmetric quoting,
// inventory lean, volatility widening, pause hysteresis and one-sided unwinding while paused,
// stops, cadence, clamping),
// the holdings split into placeable orders, the wire-spec parser and the presets.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { PRESET_NAMES, PRESETS, paramsFromPreset } from "../../src/lp/presets.ts"
import { quotesToOrders, type OrderSpec } from "../../src/lp/quotes.ts"
import { parseStrategySpec, paramsToJson, specToJson } from "../../src/lp/strategy-spec.ts"
import {
  computeQuotes, computeUnwindQuotes, type Decision, makeStrategy, nextVolBps, type Quote, resumeInventory, type StrategyInput,
  type StrategyParams, type StrategyState, validateParams
} from "../../src/lp/strategy.ts"

// spread 2¢, two levels 1¢ apart, 10 contracts; full lean of 80 bps at 100 contracts.
const P: StrategyParams = {
  spreadBps: 200, levelsPerSide: 2, levelStepBps: 100, contractsPerLevel: 10, rebalanceIntervalSec: 15,
  maxInventory: 100, skewLeanBps: 80, skewTolerancePct: 100, volWidenPct: 100,
  stopLossMicro: 1_000_000, takeProfitMicro: 2_000_000
}

type In = Partial<StrategyInput> & { readonly tsSec: number }
const input = (i: In): StrategyInput => ({ midBps: 5000, netYes: 0, pnlMicro: 0, ...i })

/** Runs a fresh strategy over `steps`; returns every decision and the final state. */
const run = (params: StrategyParams, steps: ReadonlyArray<In>): { decisions: Decision[]; states: StrategyState[] } => {
  const s = makeStrategy(params)
  let state = s.init(steps[0]?.tsSec ?? 0)
  const decisions: Decision[] = []
  const states: StrategyState[] = []
  for (const st of steps) {
    const r = s.step(state, input(st))
    state = r.state
    decisions.push(r.decision)
    states.push(r.state)
  }
  return { decisions, states }
}

/** Ladder shorthand: bid prices best first, ask prices best first, one size. */
const quotesOf = (bids: number[], asks: number[], size = 10): Quote[] => [
  ...bids.map((priceBps): Quote => ({ side: "bid", priceBps, size })),
  ...asks.map((priceBps): Quote => ({ side: "ask", priceBps, size }))
]
const ladder = (bids: number[], asks: number[], size = 10): Decision => ({ kind: "quote", quotes: quotesOf(bids, asks, size) })
const HOLD: Decision = { kind: "hold" }
/** A paused step: only the unwinding side, `side` prices best first with their sizes. */
const pause = (side: "bid" | "ask", levels: ReadonlyArray<readonly [number, number]>): Decision =>
  ({ kind: "pause", reason: "inventory_skew", quotes: levels.map(([priceBps, size]): Quote => ({ side, priceBps, size })) })
const stop = (reason: "stop_loss" | "take_profit"): Decision => ({ kind: "stop", reason })

describe("quoting", () => {
  it.each([
    { name: "flat inventory, even spread", params: P, mid: 5000, bids: [4900, 4800], asks: [5100, 5200] },
    { name: "odd spread puts the extra bp on the ask", params: { ...P, spreadBps: 201 }, mid: 5000, bids: [4900, 4800], asks: [5101, 5201] },
    { name: "fractional mid rounds half up", params: P, mid: 5000.5, bids: [4901, 4801], asks: [5101, 5201] },
    { name: "three levels, 50 bps step", params: { ...P, levelsPerSide: 3, levelStepBps: 50 }, mid: 3000, bids: [2900, 2850, 2800], asks: [3100, 3150, 3200] }
  ])("quotes both sides of mid: $name", ({ params, mid, bids, asks }) => {
    expect(run(params, [{ tsSec: 0, midBps: mid }]).decisions).toEqual([ladder(bids, asks)])
  })

  // lean = trunc(80 · netYes / 100); centre = 5000 − lean
  it.each([
    { netYes: 50, bids: [4860, 4760], asks: [5060, 5160] },
    { netYes: -50, bids: [4940, 4840], asks: [5140, 5240] },
    { netYes: 100, bids: [4820, 4720], asks: [5020, 5120] },
    { netYes: -100, bids: [4980, 4880], asks: [5180, 5280] },
    { netYes: 33, bids: [4874, 4774], asks: [5074, 5174] },  // trunc(26.4) = 26
    { netYes: -33, bids: [4926, 4826], asks: [5126, 5226] }  // trunc(−26.4) = −26: symmetric
  ])("leans away from inventory: netYes $netYes", ({ netYes, bids, asks }) => {
    expect(run(P, [{ tsSec: 0, netYes }]).decisions).toEqual([ladder(bids, asks)])
  })

  it("caps the lean at maxInventory", () => {
    expect(computeQuotes(P, 5000, 1000, 0)).toEqual(computeQuotes(P, 5000, 100, 0))
    expect(computeQuotes(P, 5000, -1000, 0)).toEqual(computeQuotes(P, 5000, -100, 0))
  })

  it("widens by the EWMA of |Δmid| per rebalance", () => {
    const steps = [{ tsSec: 0, midBps: 5000 }, { tsSec: 15, midBps: 5400 }, { tsSec: 30, midBps: 5400 }, { tsSec: 45, midBps: 5400 }]
    const { decisions, states } = run(P, steps)
    expect(states.map((s) => s.volBps)).toEqual([0, 100, 75, 56]) // floor((3·vol + |Δ|)/4)
    expect(decisions).toEqual([
      ladder([4900, 4800], [5100, 5200]),
      ladder([5200, 5100], [5600, 5700]), // widen 100: 5400 − 100 − 100
      ladder([5225, 5125], [5575, 5675]), // widen 75
      ladder([5244, 5144], [5556, 5656])  // widen 56
    ])
    // volWidenPct 50 halves the extra half-spread.
    expect(run({ ...P, volWidenPct: 50 }, steps.slice(0, 2)).decisions[1]).toEqual(ladder([5250, 5150], [5550, 5650]))
    expect(nextVolBps(1, 5000, 5000)).toBe(0) // a still market decays it to exactly 0
  })

  it("holds between rebalances and re-quotes on the interval", () => {
    const { decisions, states } = run(P, [
      { tsSec: 100 }, { tsSec: 114 }, { tsSec: 115 }, { tsSec: 129, midBps: 6000 }, { tsSec: 130, midBps: 6000 }
    ])
    expect(decisions.map((d) => d.kind)).toEqual(["quote", "hold", "quote", "hold", "quote"])
    expect(states.map((s) => s.lastQuoteSec)).toEqual([100, 100, 115, 115, 130])
    expect(states[3]?.lastMidBps).toBe(6000) // seen on a hold, used at the next re-quote
  })

  it("holds without any mid, then quotes around the last mid when the book empties", () => {
    const { decisions } = run(P, [
      { tsSec: 0, midBps: null }, { tsSec: 1 }, { tsSec: 5, midBps: 5100 }, { tsSec: 16, midBps: null }
    ])
    expect(decisions).toEqual([
      HOLD,
      ladder([4900, 4800], [5100, 5200]),
      HOLD,
      ladder([4975, 4875], [5225, 5325]) // last mid 5100; vol floor(100/4) = 25 widens each side by 25
    ])
  })

  it.each([
    { name: "near 0: innermost bid clamps to 1, deeper bid dropped", mid: 50, size: 100, bids: [1], asks: [150, 250] },
    { name: "near 0: a bid at 1 for 10 contracts is dust", mid: 50, size: 10, bids: [], asks: [150, 250] },
    { name: "mid 0", mid: 0, size: 100, bids: [1], asks: [100, 200] },
    { name: "near 9999: innermost ask clamps to 9999", mid: 9950, size: 100, bids: [9850, 9750], asks: [9999] },
    { name: "mid 10000", mid: 10000, size: 100, bids: [9900, 9800], asks: [9999] },
    { name: "dust on the NO side at 9999", mid: 9950, size: 10, bids: [9850, 9750], asks: [] }
  ])("clamps into 1..9999: $name", ({ mid, size, bids, asks }) => {
    expect(run({ ...P, contractsPerLevel: size }, [{ tsSec: 0, midBps: mid }]).decisions).toEqual([ladder(bids, asks, size)])
  })

  it("a lean past the edge keeps bid < ask", () => {
    const p = { ...P, skewLeanBps: 500, contractsPerLevel: 100 }
    expect(computeQuotes(p, 100, 100, 0)).toEqual(quotesOf([1], [2, 102], 100)) // centre −400
    expect(computeQuotes(p, 9999, -100, 0)).toEqual(quotesOf([9998, 9898], [9999], 100)) // centre 10499
  })
})

describe("pause, stop", () => {
  it("pauses above tolerance and resumes only below half of it", () => {
    // tolerance 50% of 100: pause when |net| > 50, resume when |net| < 25; resumeInventory 24
    const { decisions, states } = run({ ...P, skewTolerancePct: 50 }, [
      { tsSec: 0, netYes: 50 }, { tsSec: 1, netYes: 51 }, { tsSec: 2, netYes: 50 }, { tsSec: 20, netYes: 25 },
      { tsSec: 21, netYes: -24 }, { tsSec: 22, netYes: -24 }, { tsSec: 23, netYes: -51 }
    ])
    expect(decisions).toEqual([
      ladder([4860, 4760], [5060, 5160]), // 50 is within tolerance
      pause("ask", [[5060, 10], [5160, 10]]), // at once: asks only, lean 40, excess 51 − 24 = 27 > two levels
      HOLD, // next paused re-quote is due at 16
      pause("ask", [[5080, 1]]), // 25 is not below half; due again: lean 20, excess 1
      ladder([4919, 4819], [5119, 5219]), // resumes at once (no interval wait); lean trunc(−19.2) = −19
      HOLD,
      pause("bid", [[4940, 10], [4840, 10]]) // short YES: bids only, lean −40
    ])
    expect(states.map((s) => s.paused)).toEqual([false, true, true, true, false, false, true])
  })

  it.each([
    {
      name: "stop-loss at exactly −stopLoss, terminal even after recovery",
      steps: [{ tsSec: 0 }, { tsSec: 1, pnlMicro: -999_999 }, { tsSec: 2, pnlMicro: -1_000_000 }, { tsSec: 30, pnlMicro: 5_000_000 }],
      kinds: [ladder([4900, 4800], [5100, 5200]), HOLD, stop("stop_loss"), stop("stop_loss")]
    },
    {
      name: "take-profit, terminal",
      steps: [{ tsSec: 0 }, { tsSec: 15, pnlMicro: 1_999_999 }, { tsSec: 30, pnlMicro: 2_000_000 }, { tsSec: 45, pnlMicro: 0 }],
      kinds: [ladder([4900, 4800], [5100, 5200]), ladder([4900, 4800], [5100, 5200]), stop("take_profit"), stop("take_profit")]
    },
    {
      name: "checked between rebalances and while paused",
      steps: [{ tsSec: 0 }, { tsSec: 3, netYes: 101 }, { tsSec: 4, netYes: 101, pnlMicro: -2_000_000 }, { tsSec: 99 }],
      kinds: [ladder([4900, 4800], [5100, 5200]), pause("ask", [[5020, 10], [5120, 10]]), stop("stop_loss"), stop("stop_loss")]
    }
  ])("$name", ({ steps, kinds }) => {
    const { decisions, states } = run(P, steps)
    expect(decisions).toEqual(kinds)
    expect(states.at(-1)).toEqual(states.at(-2)) // a stopped state never changes
  })

  it("0 turns stop-loss and take-profit off", () => {
    const { decisions } = run({ ...P, stopLossMicro: 0, takeProfitMicro: 0 }, [
      { tsSec: 0, pnlMicro: -1e12 }, { tsSec: 15, pnlMicro: 1e12 }
    ])
    expect(decisions.map((d) => d.kind)).toEqual(["quote", "quote"])
  })
})

describe("paused: unwinding", () => {
  // pause when |net| > 50, resume when |net| < 25: the largest |net| that resumes is 24
  const Q: StrategyParams = { ...P, skewTolerancePct: 50 }

  it("resumeInventory is the largest |netYes| with |netYes|·200 < maxInventory·skewTolerancePct", () => {
    expect(resumeInventory(Q)).toBe(24)
    expect(resumeInventory(P)).toBe(49)
    expect(resumeInventory({ ...P, maxInventory: 20, skewTolerancePct: 80 })).toBe(7) // 7·200 < 1600 ≤ 8·200
    expect(resumeInventory({ ...P, maxInventory: 1, skewTolerancePct: 1 })).toBe(0)
  })

  it.each([
    // lean trunc(80·60/100) = 48; excess 60 − 24 = 36 = 20 + 16 over four levels of 20
    { name: "long YES: asks only", netYes: 60, quotes: [["ask", 5052, 20], ["ask", 5152, 16]] },
    { name: "long NO: bids only", netYes: -60, quotes: [["bid", 4948, 20], ["bid", 4848, 16]] },
    // lean 80 (capped), excess 200 − 24 = 176: every level full
    { name: "excess above the ladder: full levels", netYes: 200, quotes: [["ask", 5020, 20], ["ask", 5120, 20], ["ask", 5220, 20], ["ask", 5320, 20]] }
  ] as const)("quotes only the reducing side at the ladder's prices, at most the excess: $name", ({ netYes, quotes }) => {
    const p = { ...Q, levelsPerSide: 4, contractsPerLevel: 20 }
    const expected = quotes.map(([side, priceBps, size]): Quote => ({ side, priceBps, size }))
    expect(run(p, [{ tsSec: 0, netYes }]).decisions).toEqual([{ kind: "pause", reason: "inventory_skew", quotes: expected }])
    // The same prices as the normal ladder's side at that inventory: pausing changes sizes and sides, never prices.
    const side = computeQuotes(p, 5000, netYes, 0).filter((q) => q.side === expected[0]!.side)
    expect(expected.map((q) => q.priceBps)).toEqual(side.slice(0, expected.length).map((q) => q.priceBps))
  })

  it("drops a capped level that would be dust and never quotes the side that adds inventory", () => {
    // mid 50, short 26 YES: excess 2, bid0 clamps to 1, and 2 contracts at 1 bps is dust; level 1 is past 1.
    expect(computeUnwindQuotes({ ...Q, contractsPerLevel: 100 }, 50, -26, 0)).toEqual([])
    expect(computeUnwindQuotes(Q, 5000, 24, 0)).toEqual([]) // at or under the resume level nothing is in excess
    expect(computeUnwindQuotes(Q, 5000, 0, 0)).toEqual([])
  })

  it("re-quotes the unwinding side on the normal cadence, and enters a pause even with no mid", () => {
    const { decisions, states } = run(Q, [
      { tsSec: 0 }, { tsSec: 5, netYes: 60 }, { tsSec: 19, netYes: 60 }, { tsSec: 20, netYes: 50 }, { tsSec: 34, netYes: 40 }, { tsSec: 35, netYes: 40 }
    ])
    expect(decisions.map((d) => d.kind)).toEqual(["quote", "pause", "hold", "pause", "hold", "pause"])
    expect(states.map((s) => s.lastQuoteSec)).toEqual([0, 5, 5, 20, 20, 35])
    expect(decisions.map((d) => (d.kind === "pause" ? d.quotes.reduce((n, q) => n + q.size, 0) : null))).toEqual([null, 20, null, 20, null, 16])
    // No mid yet: the pause still cancels (no quotes); the first mid brings the unwinding quotes at once.
    expect(run(Q, [{ tsSec: 0, midBps: null, netYes: 60 }, { tsSec: 1, midBps: null, netYes: 60 }, { tsSec: 2, netYes: 60 }]).decisions)
      .toEqual([{ kind: "pause", reason: "inventory_skew", quotes: [] }, HOLD, pause("ask", [[5052, 10], [5152, 10]])])
  })

  it("a paused state journaled before unwinding existed (lastQuoteSec null) unwinds at its next step", () => {
    const s = makeStrategy(Q)
    const old: StrategyState = { ...s.init(0), paused: true, lastQuoteSec: null, lastMidBps: 5000, quotedMidBps: 5000 }
    expect(s.step(old, input({ tsSec: 7, netYes: 60 })).decision).toEqual(pause("ask", [[5052, 10], [5152, 10]]))
  })

  it("a simulated market: fills on the unwinding side bring inventory under the resume level, then both sides quote again", () => {
    const s = makeStrategy(Q)
    let state = s.init(0)
    let resting: Quote[] = []
    let netYes = 0
    const trace: { t: number; d: Decision; netYes: number; wasPaused: boolean }[] = []
    for (let t = 0; t <= 120; t++) {
      // Takers sell 10 YES a second for 40 s, then buy 7 a second, each sweeping our quotes on that side best first.
      const hit = t <= 40 ? "bid" : "ask"
      let flow = t === 0 ? 0 : t <= 40 ? 10 : 7
      resting = resting.map((q) => {
        if (q.side !== hit || flow === 0) return q
        const f = Math.min(q.size, flow)
        flow -= f
        netYes += hit === "bid" ? f : -f
        return { ...q, size: q.size - f }
      }).filter((q) => q.size > 0)
      const wasPaused = state.paused
      const r = s.step(state, input({ tsSec: t, netYes }))
      state = r.state
      if (r.decision.kind === "quote" || r.decision.kind === "pause") resting = [...r.decision.quotes]
      trace.push({ t, d: r.decision, netYes, wasPaused })
    }
    const acting = trace.filter((x) => x.d.kind !== "hold").map((x) => `${x.t}:${x.d.kind}:${x.netYes}`)
    // Bids hit 10 a second: re-quotes at 15 (net 20) and 30 (net 40) stay two-sided, net 60 at t=32 pauses
    // (asks only, 20 contracts); the sells then find no bids. From t=41 the buys lift the asks, the paused
    // re-quote at 47 tops them up to the excess (40 − 24 = 16), net reaches 24 < 25 at t=50 and the bot
    // resumes two-sided; further buys take it short until it pauses again with bids only (t=98).
    expect(acting).toEqual([
      "0:quote:0", "15:quote:20", "30:quote:40", "32:pause:60", "47:pause:40", "50:quote:24",
      "65:quote:4", "80:quote:-16", "95:quote:-36", "98:pause:-56", "113:pause:-56"
    ])
    for (const x of trace) {
      if (x.d.kind === "pause") {
        const sides = new Set(x.d.quotes.map((q) => q.side))
        expect([...sides]).toEqual([x.netYes > 0 ? "ask" : "bid"])
        expect(x.d.quotes.reduce((n, q) => n + q.size, 0)).toBeLessThanOrEqual(Math.abs(x.netYes) - resumeInventory(Q))
      }
      if (x.wasPaused) expect(Math.abs(x.netYes)).toBeGreaterThanOrEqual(resumeInventory(Q)) // never unwound past the resume level
    }
    const resumed = trace.find((x) => x.t === 50)!.d
    expect(resumed.kind === "quote" && new Set(resumed.quotes.map((q) => q.side))).toEqual(new Set(["bid", "ask"]))
  })
})

const arbParams: fc.Arbitrary<StrategyParams> = fc.record({
  spreadBps: fc.integer({ min: 2, max: 3000 }),
  levelsPerSide: fc.integer({ min: 1, max: 10 }),
  levelStepBps: fc.integer({ min: 1, max: 1000 }),
  contractsPerLevel: fc.integer({ min: 1, max: 1000 }),
  rebalanceIntervalSec: fc.integer({ min: 1, max: 60 }),
  maxInventory: fc.integer({ min: 1, max: 5000 }),
  skewLeanBps: fc.integer({ min: 0, max: 3000 }),
  skewTolerancePct: fc.integer({ min: 1, max: 100 }),
  volWidenPct: fc.integer({ min: 0, max: 300 }),
  stopLossMicro: fc.integer({ min: 0, max: 1e9 }),
  takeProfitMicro: fc.integer({ min: 0, max: 1e9 })
})
const arbInputs: fc.Arbitrary<StrategyInput[]> = fc
  .array(fc.record({
    dt: fc.integer({ min: 0, max: 30 }),
    midBps: fc.option(fc.integer({ min: 0, max: 10000 }), { freq: 5 }),
    netYes: fc.integer({ min: -6000, max: 6000 }),
    pnlMicro: fc.integer({ min: -2e9, max: 2e9 })
  }), { maxLength: 40 })
  .map((xs) => {
    let t = 1_700_000_000
    return xs.map(({ dt, ...rest }) => ({ tsSec: (t += dt), ...rest }))
  })

const runAll = (p: StrategyParams, inputs: ReadonlyArray<StrategyInput>, viaJson = false) => {
  const s = makeStrategy(p)
  let state = s.init(1_700_000_000)
  return inputs.map((i) => {
    const r = s.step(viaJson ? (JSON.parse(JSON.stringify(state)) as StrategyState) : state, i)
    state = r.state
    return r
  })
}

describe("properties", () => {
  it("is deterministic, and a JSON-snapshotted state continues identically", () => {
    fc.assert(fc.property(arbParams, arbInputs, (p, inputs) => {
      const a = runAll(p, inputs)
      expect(runAll(p, inputs)).toEqual(a)
      expect(runAll(p, inputs, true)).toEqual(a)
    }), { numRuns: 300 })
  })

  it("paused quotes are one-sided on the reducing side and total at most the excess over the resume level", () => {
    fc.assert(fc.property(arbParams, arbInputs, (p, inputs) => {
      runAll(p, inputs).forEach(({ decision, state }, i) => {
        if (decision.kind !== "pause") return
        expect(state.paused).toBe(true)
        const net = inputs[i]!.netYes
        for (const q of decision.quotes) expect(q.side).toBe(net > 0 ? "ask" : "bid")
        expect(decision.quotes.reduce((n, q) => n + q.size, 0)).toBeLessThanOrEqual(Math.abs(net) - resumeInventory(p))
      })
    }), { numRuns: 300 })
  })

  it("quotes are in 1..9999, never dust, bids strictly below asks and each side strictly ordered", () => {
    fc.assert(fc.property(arbParams, arbInputs, (p, inputs) => {
      for (const { decision } of runAll(p, inputs)) {
        if (decision.kind !== "quote" && decision.kind !== "pause") continue
        const bids = decision.quotes.filter((q) => q.side === "bid").map((q) => q.priceBps)
        const asks = decision.quotes.filter((q) => q.side === "ask").map((q) => q.priceBps)
        for (const q of decision.quotes) {
          expect(Number.isInteger(q.priceBps) && q.priceBps >= 1 && q.priceBps <= 9999).toBe(true)
          expect(q.size * Math.min(q.priceBps, 10000 - q.priceBps)).toBeGreaterThanOrEqual(100)
        }
        if (bids.length > 0 && asks.length > 0) expect(Math.max(...bids)).toBeLessThan(Math.min(...asks))
        bids.slice(1).forEach((b, i) => expect(b).toBeLessThan(bids[i]!))
        asks.slice(1).forEach((a, i) => expect(a).toBeGreaterThan(asks[i]!))
      }
    }), { numRuns: 300 })
  })
})

describe("quotesToOrders", () => {
  const q = (side: "bid" | "ask", priceBps: number, size = 10): Quote => ({ side, priceBps, size })
  const o = (side: "buy" | "sell", outcome: "yes" | "no", priceBps: number, size: number): OrderSpec => ({ side, outcome, priceBps, size })

  it.each([
    {
      name: "no holdings: bids buy YES, asks buy NO",
      quotes: [q("bid", 4900), q("ask", 5100)], yes: 0, no: 0,
      orders: [o("buy", "yes", 4900, 10), o("buy", "no", 4900, 10)]
    },
    {
      name: "held shares are sold first, innermost quote first, remainder bought",
      quotes: [q("bid", 4900), q("bid", 4800), q("ask", 5100), q("ask", 5200)], yes: 15, no: 3,
      orders: [
        o("sell", "no", 5100, 3), o("buy", "yes", 4900, 7), o("buy", "yes", 4800, 10),
        o("sell", "yes", 5100, 10), o("sell", "yes", 5200, 5), o("buy", "no", 4800, 5)
      ]
    },
    {
      name: "a dust sell part goes to the buy side instead",
      quotes: [q("ask", 50)], yes: 1, no: 0,
      orders: [o("buy", "no", 9950, 10)] // selling 1 @ 50 bps is half a cent
    },
    {
      name: "a dust buy part is skipped",
      quotes: [q("ask", 9999, 50)], yes: 49, no: 0,
      orders: [o("sell", "yes", 9999, 49)] // buying 1 NO @ 1 bps is dust
    },
    { name: "negative holdings count as none", quotes: [q("ask", 6000)], yes: -5, no: 0, orders: [o("buy", "no", 4000, 10)] }
  ])("$name", ({ quotes, yes, no, orders }) => {
    expect(quotesToOrders(quotes, { yes, no })).toEqual(orders)
  })
})

describe("parseStrategySpec", () => {
  const advanced = {
    mode: "advanced", capital_micro_usdc: 1_000_000_000, spread_bps: 300, levels_per_side: 3, contracts_per_level: 20,
    rebalance_interval_secs: 10, skew_tolerance_pct: 70, stop_loss_micro_usdc: 5_000_000, take_profit_micro_usdc: 0
  }
  const { take_profit_micro_usdc: _tp, ...noTakeProfit } = advanced

  it.each([
    { name: "not an object", u: null, field: "strategy" },
    { name: "an array", u: [], field: "strategy" },
    { name: "no mode", u: {}, field: "strategy.mode" },
    { name: "no capital", u: { mode: "simple", preset: "balanced" }, field: "strategy.capital_micro_usdc" },
    { name: "capital below 1 USDC", u: { mode: "simple", capital_micro_usdc: 999_999, preset: "balanced" }, field: "strategy.capital_micro_usdc" },
    { name: "unknown preset", u: { mode: "simple", capital_micro_usdc: 1e9, preset: "yolo" }, field: "strategy.preset" },
    { name: "advanced field in simple mode", u: { mode: "simple", capital_micro_usdc: 1e9, preset: "balanced", spread_bps: 100 }, field: "strategy.spread_bps" },
    { name: "unknown field", u: { ...advanced, spread: 100 }, field: "strategy.spread" },
    { name: "spread below 2", u: { ...advanced, spread_bps: 1 }, field: "strategy.spread_bps" },
    { name: "11 levels", u: { ...advanced, levels_per_side: 11 }, field: "strategy.levels_per_side" },
    { name: "fractional contracts", u: { ...advanced, contracts_per_level: 1.5 }, field: "strategy.contracts_per_level" },
    { name: "contracts as a string", u: { ...advanced, contracts_per_level: "20" }, field: "strategy.contracts_per_level" },
    { name: "zero interval", u: { ...advanced, rebalance_interval_secs: 0 }, field: "strategy.rebalance_interval_secs" },
    { name: "tolerance 0", u: { ...advanced, skew_tolerance_pct: 0 }, field: "strategy.skew_tolerance_pct" },
    { name: "negative stop-loss", u: { ...advanced, stop_loss_micro_usdc: -1 }, field: "strategy.stop_loss_micro_usdc" },
    { name: "missing take-profit", u: noTakeProfit, field: "strategy.take_profit_micro_usdc" },
    { name: "level step 0", u: { ...advanced, level_step_bps: 0 }, field: "strategy.level_step_bps" },
    { name: "max inventory 0", u: { ...advanced, max_inventory: 0 }, field: "strategy.max_inventory" },
    { name: "negative lean", u: { ...advanced, skew_lean_bps: -1 }, field: "strategy.skew_lean_bps" },
    { name: "vol widen above 1000", u: { ...advanced, vol_widen_pct: 1001 }, field: "strategy.vol_widen_pct" }
  ])("rejects $name at $field", ({ u, field }) => {
    const r = parseStrategySpec(u)
    expect(r.ok ? null : r.field).toBe(field)
  })

  it("prefixes a custom path", () => {
    expect(parseStrategySpec({ mode: "simple" }, "params")).toMatchObject({ ok: false, field: "params.capital_micro_usdc" })
  })

  it("fills advanced defaults from the required fields", () => {
    const r = parseStrategySpec(advanced)
    expect(r).toEqual({
      ok: true,
      spec: advanced,
      params: {
        spreadBps: 300, levelsPerSide: 3, levelStepBps: 150, contractsPerLevel: 20, rebalanceIntervalSec: 10,
        maxInventory: 60, skewLeanBps: 112, skewTolerancePct: 70, volWidenPct: 50, stopLossMicro: 5_000_000, takeProfitMicro: 0
      }
    })
  })

  it("simple mode uses the preset; params round-trip through paramsToJson; specToJson is canonical", () => {
    const simple = { preset: "balanced", capital_micro_usdc: 1e9, mode: "simple" }
    const r = parseStrategySpec(simple)
    expect(r).toEqual({ ok: true, spec: { mode: "simple", capital_micro_usdc: 1e9, preset: "balanced" }, params: paramsFromPreset("balanced", 1e9) })
    if (r.ok) expect(Object.keys(specToJson(r.spec))).toEqual(["mode", "capital_micro_usdc", "preset"])
    const back = parseStrategySpec(JSON.parse(JSON.stringify(paramsToJson(P, 1e9))))
    expect(back.ok && back.params).toEqual(P)
  })
})

describe("presets", () => {
  // capital 1,000 USDC, no mid: contracts = floor(1e9·deploy%/(levels·1e6)), inventory = floor(1e9·inv%/1e6)
  it.each([
    { preset: "conservative" as const, contractsPerLevel: 150, maxInventory: 400, stopLossMicro: 50_000_000, takeProfitMicro: 100_000_000 },
    { preset: "balanced" as const, contractsPerLevel: 166, maxInventory: 600, stopLossMicro: 100_000_000, takeProfitMicro: 200_000_000 },
    { preset: "aggressive" as const, contractsPerLevel: 160, maxInventory: 800, stopLossMicro: 200_000_000, takeProfitMicro: 400_000_000 }
  ])("$preset scales with capital", ({ preset, ...expected }) => {
    expect(paramsFromPreset(preset, 1_000_000_000)).toMatchObject({ ...expected, spreadBps: PRESETS[preset].spreadBps })
  })

  it("uses the mid for inventory value and the dust floor", () => {
    expect(paramsFromPreset("balanced", 1e9, 5000).maxInventory).toBe(1200) // 6e8 / 0.50 USDC
    expect(paramsFromPreset("balanced", 1e9, 200).maxInventory).toBe(612)   // 6e8 / 0.98 USDC
    expect(paramsFromPreset("conservative", 1_000_000, 20)).toMatchObject({ contractsPerLevel: 5, maxInventory: 5, stopLossMicro: 50_000, takeProfitMicro: 100_000 })
  })

  it("every preset passes validateParams at any capital and mid", () => {
    for (const name of PRESET_NAMES) {
      for (const capital of [1, 1_000_000, 123_456_789, 1e12, 2 ** 51, Number.MAX_SAFE_INTEGER]) {
        for (const mid of [undefined, 1, 20, 5000, 9999, 0, 10000]) {
          expect(validateParams(paramsFromPreset(name, capital, mid)), `${name} ${capital} ${mid}`).toBeNull()
        }
      }
    }
    expect(() => paramsFromPreset("balanced", 0)).toThrow(RangeError)
  })

  it("validateParams names the bad field; makeStrategy refuses bad params", () => {
    expect(validateParams(P)).toBeNull()
    expect(validateParams({ ...P, levelsPerSide: 0 })).toMatch(/^levelsPerSide /)
    expect(validateParams({ ...P, skewTolerancePct: 101 })).toMatch(/^skewTolerancePct /)
    expect(() => makeStrategy({ ...P, spreadBps: 1 })).toThrow(/spreadBps/)
  })
})
