// History store figures: projection throughput into DuckDB (bulk and per live flush),
// the start-up seed load, a full rebuild from the journal, and the latency of the reads
// the API serves (/trades, /candles) from the in-memory History versus DuckDB queries.
// `npx tsx bench/history.ts [--trades=200000] [--markets=8] [--json]`
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { Exchange } from "../src/service/exchange.ts"
import type { JournalRecord, ServiceCommand } from "../src/service/commands.ts"
import { History, INTERVALS, type Interval } from "../src/service/history.ts"
import { openDurableExchange } from "../src/store/durable.ts"
import { HistoryStore } from "../src/store/history-db.ts"
import { rebuildHistory } from "../src/store/history-rebuild.ts"
import { numberFlag, percentile, round, type Suite } from "./lib.ts"

const T0_SEC = 1_795_305_600

/** Commands that produce `trades` fills over `markets` markets: a resting YES buy, then a NO buy that mints against it. */
const workload = (trades: number, markets: number): ServiceCommand[] => {
  const cmds: ServiceCommand[] = []
  for (let i = 0; i < markets; i++) {
    cmds.push({ type: "create_event", event: { question: `Bench market ${i}?`, category: "BTC", slug: `bench-${i}`, expiry: T0_SEC + 10 * 365 * 86_400, fee_bps: 10 } })
  }
  const users = ["0xa", "0xb", "0xc", "0xd"].map((u) => u.padEnd(42, "0"))
  for (const user of users) cmds.push({ type: "credit", user, amountMicro: 1e15, ref: `bench-${user}` })
  let s = 7
  const rnd = (n: number): number => {
    s = (Math.imul(s, 1_103_515_245) + 12_345) >>> 0
    return (s >>> 8) % n
  }
  let nonce = 1
  let price = 5_000
  for (let i = 0; i < trades; i++) {
    price = Math.min(9_000, Math.max(1_000, price + rnd(41) - 20))
    const marketId = `m${rnd(markets)}`
    const [maker, taker] = [users[rnd(4)]!, users[rnd(4)]!]
    const size = 1 + rnd(20)
    cmds.push({ type: "place_order", order: { user: maker, marketId, side: "buy", outcome: "yes", priceBps: price, size, orderType: "gtc", nonce: nonce++ } })
    cmds.push({ type: "place_order", order: { user: taker, marketId, side: "buy", outcome: "no", priceBps: 10_000 - price, size, orderType: "gtc", nonce: nonce++ } })
  }
  return cmds
}

const stats = (samples: number[]): { p50_us: number; p99_us: number; mean_us: number } => {
  const sorted = Float64Array.from(samples).sort()
  return {
    p50_us: round(percentile(sorted, 50) * 1000, 1),
    p99_us: round(percentile(sorted, 99) * 1000, 1),
    mean_us: round((samples.reduce((a, b) => a + b, 0) / samples.length) * 1000, 1)
  }
}

export const historySuite: Suite = async ({ args, report, log }) => {
  const tradeCount = numberFlag(args, "trades", 200_000)
  const marketCount = numberFlag(args, "markets", 8)
  const dir = mkdtempSync(join(tmpdir(), "twinbook-bench-history-"))
  try {
    // 1. Journal a workload (durable, as the service would) and keep its records.
    log(`journaling ${tradeCount} trades over ${marketCount} markets…`)
    let ms = T0_SEC * 1000
    const d = await openDurableExchange(join(dir, "data"), () => ms, { onFatal: (e) => { throw e } })
    // The workload names markets m0, m1, …; they get their catalogue ids here.
    const records: Array<{ record: JournalRecord; result: ReturnType<Exchange["apply"]> }> = []
    d.exchange.onApply((record, result) => records.push({ record, result }))
    const cmds = workload(tradeCount, marketCount)
    const marketIds: string[] = []
    for (const cmd of cmds) {
      ms += 500
      const c: ServiceCommand =
        cmd.type === "place_order" ? { type: "place_order", order: { ...cmd.order, marketId: marketIds[Number(cmd.order.marketId.slice(1))]! } } : cmd
      const { result } = d.exchange.submit(c)
      if (result.event !== undefined) marketIds.push(result.event.outcomes[0]!.market_id)
    }
    await d.close()
    const fills = records.reduce((n, r) => n + r.result.events.filter((e) => e.type === "fill").length, 0)
    log(`${records.length} records, ${fills} fills`)

    // 2. Projection: bulk (rebuild-sized flushes) and live-sized (one flush a second at ~1k trades/s).
    for (const [name, every] of [["bulk 50k records/flush", 50_000], ["live 2k records/flush", 2_000], ["small 200 records/flush", 200]] as const) {
      const path = join(dir, `proj-${every}.duckdb`)
      const store = await HistoryStore.open(path)
      const t0 = performance.now()
      let flushes = 0
      const flushMs: number[] = []
      for (let i = 0; i < records.length; i++) {
        store.record(records[i]!.record, records[i]!.result)
        if ((i + 1) % every === 0 || i === records.length - 1) {
          const f0 = performance.now()
          await store.flush()
          flushMs.push(performance.now() - f0)
          flushes++
        }
      }
      const secs = (performance.now() - t0) / 1000
      report({ name: `projection ${name}`, rows: fills, flushes, rows_per_s: Math.round(fills / secs), flush_p50_ms: round(percentile(Float64Array.from(flushMs).sort(), 50), 2) })
      await store.close()
    }

    // 3. Start-up seed: load every trade from DuckDB into a History.
    const path = join(dir, "proj-50000.duckdb")
    const store = await HistoryStore.open(path)
    const s0 = performance.now()
    const all = await store.trades()
    const loadMs = performance.now() - s0
    const h0 = performance.now()
    const history = new History()
    history.seed(all, Number.MAX_SAFE_INTEGER)
    report({ name: "start-up seed", trades: all.length, duckdb_read_ms: Math.round(loadMs), history_build_ms: Math.round(performance.now() - h0), trades_per_s: Math.round(all.length / (loadMs / 1000)) })

    // 4. A full rebuild from the journal (decode + replay + project).
    const r0 = performance.now()
    const rebuilt = await rebuildHistory(join(dir, "data"), { path: join(dir, "rebuilt.duckdb") })
    const rSecs = (performance.now() - r0) / 1000
    report({ name: "rebuild from journal", records: rebuilt.records, trades: rebuilt.trades, seconds: round(rSecs, 2), records_per_s: Math.round(rebuilt.records / rSecs), trades_per_s: Math.round(rebuilt.trades / rSecs) })

    // 5. Read latency: what /trades and /candles would cost from each side.
    const lastTime = all.at(-1)!.time
    const reads: Array<{ name: string; mem: () => unknown; db: () => Promise<unknown> }> = []
    for (const [limit, offset] of [[100, 0], [100, 5_000]] as const) {
      reads.push({
        name: `/trades limit=${limit} offset=${offset}`,
        mem: () => history.marketTrades(marketIds[0]!, limit, offset),
        db: () => store.marketTrades(marketIds[0]!, limit, offset)
      })
    }
    reads.push({ name: "/trades/{user} limit=100", mem: () => history.userTrades(all[0]!.maker, 100, 0), db: () => store.userTrades(all[0]!.maker, 100, 0) })
    for (const iv of ["1m", "1h"] as Interval[]) {
      const to = lastTime + 1
      const from = to - 500 * INTERVALS[iv]
      reads.push({ name: `/candles ${iv} 500 buckets`, mem: () => history.candleRange(marketIds[0]!, iv, from, to), db: () => store.candles(marketIds[0]!, iv, from, to) })
    }
    for (const read of reads) {
      const mem: number[] = []
      const db: number[] = []
      for (let i = 0; i < 50; i++) {
        read.mem()
        await read.db()
      }
      for (let i = 0; i < 400; i++) {
        const a = performance.now()
        read.mem()
        mem.push(performance.now() - a)
        const b = performance.now()
        await read.db()
        db.push(performance.now() - b)
      }
      const m = stats(mem)
      const q = stats(db)
      report({ name: `read ${read.name}`, memory_p50_us: m.p50_us, memory_p99_us: m.p99_us, duckdb_p50_us: q.p50_us, duckdb_p99_us: q.p99_us, ratio_p50: round(q.p50_us / Math.max(m.p50_us, 0.1), 0) })
    }
    await store.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
