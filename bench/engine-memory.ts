// Resident memory of an engine holding N resting orders. Runs in its own
// `node --expose-gc` child so the figure is not polluted by the throughput
// bench's command arrays or by garbage it left behind.
import { execFileSync } from "node:child_process"
import { fileURLToPath, pathToFileURL } from "node:url"
import { dirname, resolve } from "node:path"
import { Engine, type EngineEvent } from "../src/engine/index.ts"
import { type BenchResult, mb, tryGc } from "./lib.ts"
import { mulberry32 } from "./engine-workload.ts"

const TARGET_MB = 400

/** Spawns the child and returns its single result line. */
export const measureEngineMemory = (restingOrders: number, seed: number): BenchResult => {
  const self = fileURLToPath(import.meta.url)
  const out = execFileSync(process.execPath, ["--expose-gc", "--import", "tsx", self, String(restingOrders), String(seed)], {
    cwd: resolve(dirname(self), ".."),
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 1 << 20
  })
  return JSON.parse(out.trim().split("\n").at(-1)!) as BenchResult
}

const child = (restingOrders: number, seed: number): BenchResult => {
  const rand = mulberry32(seed)
  const users = Array.from({ length: 1_000 }, (_, i) => `user${String(i).padStart(5, "0")}`)
  const markets = Array.from({ length: 8 }, (_, i) => `market-${i}`)
  tryGc()
  const baseline = process.memoryUsage()

  const e = new Engine()
  let seq = 0
  let problems = 0
  // Commands are built and dropped one at a time: only engine state survives to the measurement.
  const apply = (cmd: Parameters<Engine["apply"]>[0], expect: EngineEvent["type"]): void => {
    const ev = e.apply(cmd)
    if (!ev.some((x) => x.type === expect)) problems++
  }
  const tsSec = 1_700_000_000
  for (const marketId of markets) apply({ type: "create_market", seq: ++seq, tsSec, marketId, takerFeeBps: 20 }, "market_created")
  for (const user of users) apply({ type: "credit", seq: ++seq, tsSec, user, amountMicro: 1e15, ref: "bench" }, "credited")
  const nonces = new Float64Array(users.length)
  for (let i = 0; i < restingOrders; i++) {
    const u = i % users.length
    const isBid = rand() < 0.5
    // Bids below 5000, asks above: nothing ever crosses, every order rests.
    const yes = isBid ? 100 + Math.floor(rand() * 4_900) : 5_001 + Math.floor(rand() * 4_899)
    apply(
      {
        type: "place_order",
        seq: ++seq,
        tsSec,
        user: users[u]!,
        marketId: markets[Math.floor(rand() * markets.length)]!,
        side: "buy",
        outcome: isBid ? "yes" : "no",
        priceBps: isBid ? yes : 10_000 - yes,
        size: 1 + Math.floor(rand() * 1_000),
        orderType: "gtc",
        nonce: ++nonces[u]!
      },
      "order_rested"
    )
  }
  const gcAvailable = tryGc()
  const used = process.memoryUsage()
  const rssMB = mb(used.rss)
  return {
    name: "engine.memory",
    restingOrders: e.orders.size,
    notRested: problems,
    rssMB,
    heapMB: mb(used.heapUsed),
    baselineRssMB: mb(baseline.rss),
    deltaRssMB: mb(used.rss - baseline.rss),
    bytesPerOrder: Math.round((used.heapUsed - baseline.heapUsed) / Math.max(1, e.orders.size)),
    gcForced: gcAvailable,
    targetMB: TARGET_MB,
    meetsTarget: rssMB < TARGET_MB
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.stdout.write(`${JSON.stringify(child(Number(process.argv[2] ?? 1_000_000), Number(process.argv[3] ?? 1)))}\n`)
}
