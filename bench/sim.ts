// Simulation suite: (1) API requests per second through the in-process transport
// (the real app, scheduler events, seeded 1 ms latency) — book and balance reads, and
// signed orders separately; (2) the busy-day scenario (50 markets, 500 agents, 24 h):
// events per second, virtual/wall ratio and wall time against the 60 s target.
//
// (3) with --baseline[=REV], the busy day back to back against REV (default: 8ffca7a, the commit
// before issue 15's first change), whole processes alternately: issue 15's "≤ 0.5×" row.
//
// Flags: --requests=N (200000)  --orders=N (50000)  --clients=N (200)  --skip-day  --baseline[=REV]  --pairs=N (3)
import { join } from "node:path"
import { adminSetupCall } from "../sim/scenario/operator.ts"
import { runScenario } from "../sim/scenario/run.ts"
import { loadScenario } from "../sim/scenario/scenario.ts"
import { API, World } from "../sim/world/world.ts"
import { ApiClient } from "../src/client/api-client.ts"
import { fastKeyFromSecret } from "../src/client/keys-node.ts"
import { backToBack, median } from "./baseline.ts"
import { numberFlag, round, type Suite } from "./lib.ts"

const REQUESTS_TARGET = 50_000
const DAY_TARGET_SEC = 60
/** The commit before issue 15's first change: the busy day's wall time is compared with it. */
const BUSY_DAY_BASELINE = "8ffca7a"
/** Issue 15: the busy day at most this share of the baseline's wall time, back to back. */
const BUSY_DAY_TARGET_RATIO = 0.5

/** `clients` closed loops through the simulated network until `total` requests are answered. */
const throughput = async (kind: "reads" | "orders", total: number, clientCount: number): Promise<{ perSec: number; answered: number; wallMs: number }> => {
  const world = new World({ seed: "bench", startSec: 1_767_225_600, devCredit: true, network: { latencyMinMs: 1, latencyMaxMs: 1, dropPct: 0, responseDropPct: 0, timeoutMs: 60_000 } })
  const res = await adminSetupCall(world, "/v1/events", { question: "Bench?", category: "Culture", slug: "bench", expiry: 1_800_000_000 })
  const marketId = JSON.parse(res.body).outcomes[0].market_id as string
  const clients: ApiClient[] = []
  for (let i = 0; i < clientCount; i++) {
    const c = new ApiClient(API, fastKeyFromSecret(new Uint8Array(32).fill(i + 1)), world.network.fetchFor(`10.1.${i >> 8}.${i & 255}`), () => world.scheduler.nowSec())
    const reg = c.register()
    await world.scheduler.run(world.scheduler.nowMs() + 10)
    if ((await reg).status !== 200) throw new Error("register failed")
    await adminSetupCall(world, "/v1/admin/credit", { user: c.user, amount_micro: 1_000_000_000_000 })
    clients.push(c)
  }
  let answered = 0
  let sent = 0
  const loop = async (c: ApiClient, i: number): Promise<void> => {
    while (sent < total) {
      sent++
      const r =
        kind === "reads"
          ? await (sent % 2 === 0 ? c.request("GET", `/v1/markets/${marketId}/book`) : c.balance())
          : await c.placeOrder({ market_id: marketId, side: "buy", outcome: i % 2 === 0 ? "yes" : "no", price: 100 + (sent % 40) * 10, size: 1, order_type: "ioc" })
      if (r.status >= 500) throw new Error(`bench request failed: ${r.status}`)
      answered++
    }
  }
  // Orders: the per-wallet and per-IP limits would answer 429 within a second; lift them for a throughput figure.
  if (kind === "orders") world.core.ctx.limiter.take = () => {}
  const loops = Promise.all(clients.map(loop))
  const t0 = performance.now()
  await world.scheduler.run(Number.MAX_SAFE_INTEGER, () => answered < total)
  const wallMs = performance.now() - t0
  // Every request sent has been answered, so every loop has returned (or thrown: surface it).
  await loops
  return { perSec: (answered / wallMs) * 1000, answered, wallMs }
}

export const simSuite: Suite = async ({ args, report, log }) => {
  const requests = numberFlag(args, "requests", 200_000)
  const orders = numberFlag(args, "orders", 50_000)
  const clientCount = numberFlag(args, "clients", 200)

  log(`sim: ${requests} reads through the in-process transport (${clientCount} closed-loop clients)`)
  const reads = await throughput("reads", requests, clientCount)
  report({ name: "transport reads", requests: reads.answered, requests_per_s: Math.round(reads.perSec), target_per_s: REQUESTS_TARGET, ratio_to_target: round(reads.perSec / REQUESTS_TARGET, 2) })

  log(`sim: ${orders} signed orders through the in-process transport (client signing + server verification included)`)
  const signed = await throughput("orders", orders, clientCount)
  report({ name: "transport signed orders", requests: signed.answered, requests_per_s: Math.round(signed.perSec), target_per_s: null, ratio_to_target: null })

  if (args.includes("--skip-day")) return
  log("sim: busy-day scenario, 24 h virtual (this takes about a minute)")
  const scenario = loadScenario(join(import.meta.dirname, "../scenarios/busy-day.json"))
  const t0 = performance.now()
  const s = await runScenario(scenario, { wallMs: () => performance.now(), onProgress: (f) => log(`  ${Math.round(f * 100)}%`) })
  const wallSec = (performance.now() - t0) / 1000
  report({
    name: "busy day (50 markets, 500 agents, 24 h)",
    ok: s.ok,
    wall_s: round(wallSec, 1),
    target_wall_s: DAY_TARGET_SEC,
    ratio_to_target: round(DAY_TARGET_SEC / wallSec, 2),
    virtual_to_wall: Math.round(s.virtualSec / wallSec),
    events: s.events,
    events_per_s: Math.round(s.events / wallSec),
    requests: s.requests,
    requests_per_s: Math.round(s.requests / wallSec),
    journal_records: s.journalRecords,
    fills: s.fills
  })

  const baselineArg = args.find((a) => a === "--baseline" || a.startsWith("--baseline="))
  if (baselineArg === undefined) return
  const rev = baselineArg.includes("=") ? baselineArg.slice("--baseline=".length) : BUSY_DAY_BASELINE
  const pairs = numberFlag(args, "pairs", 3)
  log(`sim: busy day back to back against ${rev}, ${pairs} pair(s) of whole processes (about ${Math.round(pairs * 1.5)} min)`)
  const day = ["--max-semi-space-size=64", "--import", "tsx", "sim/cli.ts", "scenarios/busy-day.json"]
  const b = backToBack(rev, day, pairs, log)
  if (typeof b === "string") {
    log(`sim: ${b}`)
    report({ name: "busy day vs baseline", baseline: rev, error: b, meetsTarget: false })
    return
  }
  const ratio = median(b.ratios)
  report({
    name: "busy day vs baseline",
    baseline: rev,
    pairs,
    wall_s: round(median(b.here), 1),
    baseline_wall_s: round(median(b.there), 1),
    ratio_median: round(ratio, 3),
    ratio_min: round(Math.min(...b.ratios), 3),
    ratio_max: round(Math.max(...b.ratios), 3),
    targetRatio: BUSY_DAY_TARGET_RATIO,
    meetsTarget: ratio <= BUSY_DAY_TARGET_RATIO
  })
}
