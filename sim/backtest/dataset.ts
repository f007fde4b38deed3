// The historical input as columns: one time-ordered stream of events (trades and book
// snapshots) in typed arrays, so a million-trade replay neither allocates per event nor
// copies when shared with sweep workers (the arrays may sit on SharedArrayBuffers).
//
// Times are ms. Data with whole-second timestamps spreads the k trades of one second evenly
// through it (offset floor(j·1000/k)), keeping file order, so order-entry and feed latencies
// below a second still mean something. At one ms: snapshots, order cancels, order arrivals,
// trades, order adds: the order in which one journal record produces them (a snapshot is the
// book before the record; an order arrives, trades, and what is left comes to rest).

import { type Bunching, bunchingWarning, findBunching } from "./bunching.ts"

export const KIND_TRADE = 0
export const KIND_SNAPSHOT = 1
/** Order-level (L3) events of a tape's orders file: an order came to rest / a resting order left / an order arrived. */
export const KIND_ADD = 2
export const KIND_CANCEL = 3
export const KIND_NEW = 4
/** Sort rank of each kind among events of one ms (index = kind). */
const RANK = [3, 0, 4, 1, 2]
/** Order events' `event` column values, and the kind each becomes. */
export const EVENT_ADD = 0
export const EVENT_CANCEL = 1
export const EVENT_NEW = 2
const KIND_OF_EVENT = [KIND_ADD, KIND_CANCEL, KIND_NEW]
/** Order types, as the `orderType` column holds them (index). */
export const ORDER_TYPES = ["gtc", "post_only", "ioc", "fok"] as const
/** Trades: taker bought YES (lifted an ask) / sold YES (hit a bid). Levels: bid / ask. */
export const TAKER_BUY = 0
export const TAKER_SELL = 1

export class BacktestInputError extends Error {
  override readonly name = "BacktestInputError"
}

export interface Dataset {
  readonly source: string
  readonly markets: ReadonlyArray<string>
  readonly count: number
  readonly trades: number
  readonly snapshots: number
  /** Order-level events (adds and cancels). */
  readonly orders: number
  /** Order owners' pseudonyms (an order event's `owner` indexes this). */
  readonly owners: ReadonlyArray<string>
  readonly tMs: Float64Array
  readonly market: Uint16Array
  readonly kind: Uint8Array
  /** Trades: TAKER_BUY / TAKER_SELL. Order events: 0 bid, 1 ask. */
  readonly side: Uint8Array
  readonly priceBps: Uint16Array
  /** Trades: contracts. Snapshots: number of levels. Order events: the order's resting contracts. */
  readonly size: Int32Array
  /** Order events: the tape's order id. Trades (with orders): the resting order the trade filled, NaN when unknown. */
  readonly orderId: Float64Array
  /** Order events: index into `owners`. */
  readonly owner: Int32Array
  /** Order events: index into ORDER_TYPES. */
  readonly orderType: Uint8Array
  /** Snapshots: index of the first level (bids best first, then asks best first). */
  readonly levelStart: Int32Array
  readonly levelIsAsk: Uint8Array
  readonly levelPrice: Uint16Array
  readonly levelSize: Int32Array
  /** What is suspect in the input but not fatal (rows out of order, duplicates), each naming a row: shown loudly. */
  readonly warnings: ReadonlyArray<string>
  /** Facts about the input a reader should know that are not suspect on their own (shown as report notes). */
  readonly notes: ReadonlyArray<string>
  /** Seconds holding far more events than the data's typical second (sim/backtest/bunching.ts); a warning names them. */
  readonly bunching: Bunching
}

/** Trades as loaded, in file order. `tMs` is whole seconds × 1000 unless `exactMs`. */
export interface TradeColumns {
  readonly n: number
  readonly exactMs: boolean
  readonly tMs: Float64Array
  readonly marketNames: ReadonlyArray<string>
  readonly market: Uint16Array
  readonly priceBps: Uint16Array
  readonly size: Int32Array
  readonly side: Uint8Array
  /** Each trade's id when the data has one (a tape): rows with different ids are never repeats of each other. */
  readonly tradeId?: Float64Array | null
  /** Each trade's resting order (a tape's `maker_order_id`), when the data has it: an order-level replay learns when the tape's order was used up. */
  readonly makerOrderId?: Float64Array | null
}

export interface LevelColumns {
  /** The file the rows came from (errors name it with the 1-based data row); "snapshots" when hand-built. */
  readonly source?: string
  readonly n: number
  readonly tMs: Float64Array
  readonly marketNames: ReadonlyArray<string>
  readonly market: Uint16Array
  readonly isAsk: Uint8Array
  readonly priceBps: Uint16Array
  readonly size: Int32Array
}

export interface OrderColumns {
  readonly n: number
  readonly tMs: Float64Array
  readonly marketNames: ReadonlyArray<string>
  readonly market: Uint16Array
  readonly orderId: Float64Array
  /** EVENT_ADD, EVENT_CANCEL or EVENT_NEW. */
  readonly event: Uint8Array
  /** Index into ORDER_TYPES. */
  readonly orderType: Uint8Array
  readonly isAsk: Uint8Array
  readonly priceBps: Uint16Array
  readonly size: Int32Array
  readonly ownerNames: ReadonlyArray<string>
  readonly owner: Int32Array
}

/** Indices 0..n-1 sorted by key, stable (file order breaks ties); identity when already sorted. */
const stableOrder = (n: number, key: Float64Array): Int32Array => {
  const idx = new Int32Array(n)
  let sorted = true
  for (let i = 0; i < n; i++) {
    idx[i] = i
    if (i > 0 && key[i]! < key[i - 1]!) sorted = false
  }
  if (sorted) return idx
  return Int32Array.from(Array.from(idx).sort((a, b) => key[a]! - key[b]! || a - b))
}

/**
 * Trade rows out of time order (they are sorted, but a file that is not is often the wrong file)
 * and exact duplicates (same time, market, price, size and side, and trade id where the data has
 * one: a feed that repeats itself).
 * Rows are named 1-based in file order, as the loader names bad values.
 */
export const tradeWarnings = (trades: TradeColumns, order: Int32Array): { warnings: string[]; notes: string[] } => {
  const out: string[] = []
  const notes: string[] = []
  let late = 0
  let firstLate = -1
  for (let i = 1; i < trades.n; i++) {
    if (trades.tMs[i]! < trades.tMs[i - 1]!) {
      late++
      if (firstLate < 0) firstLate = i
    }
  }
  if (late > 0) {
    out.push(`data row ${firstLate + 1} is earlier than data row ${firstLate} (${trades.tMs[firstLate]! / 1000} s < ${trades.tMs[firstLate - 1]! / 1000} s): ${late} row(s) out of time order, replayed sorted by time`)
  }
  let dups = 0
  let example = ""
  for (let i = 0; i < trades.n; ) {
    const t = trades.tMs[order[i]!]!
    if (i + 1 >= trades.n || trades.tMs[order[i + 1]!] !== t) {
      i++
      continue
    }
    const seen = new Map<string, number>()
    for (; i < trades.n && trades.tMs[order[i]!] === t; i++) {
      const r = order[i]!
      const key = `${trades.market[r]}:${trades.priceBps[r]}:${trades.size[r]}:${trades.side[r]}:${trades.tradeId?.[r] ?? ""}`
      const prev = seen.get(key)
      if (prev === undefined) seen.set(key, r)
      else {
        dups++
        if (example === "") example = `data row ${r + 1} duplicates data row ${prev + 1} (same time, market, price, size and side)`
      }
    }
  }
  // Whole-second data cannot tell a repeated record from two equal trades in one second: a note, not a warning.
  if (dups > 0 && trades.exactMs) out.push(`${example}: ${dups} duplicate row(s), kept as separate trades; remove them if the feed repeats itself`)
  else if (dups > 0) notes.push(`${example} within one second: ${dups} such row(s), kept as separate trades (whole-second data cannot tell a repeated record from two equal trades)`)
  return { warnings: out, notes }
}

// One piece: one pass that interns market names, sorts and indexes the columns; each phase is commented and shares the interned tables.
export const buildDataset = (source: string, trades: TradeColumns, levels: LevelColumns | null, orders: OrderColumns | null = null): Dataset => {
  const names = [...new Set([...trades.marketNames, ...(levels?.marketNames ?? []), ...(orders?.marketNames ?? [])])].sort()
  if (names.length > 65_535) throw new BacktestInputError(`too many markets (${names.length})`)
  const remap = (local: ReadonlyArray<string>): Uint16Array => Uint16Array.from(local.map((m) => names.indexOf(m)))
  const tradeMap = remap(trades.marketNames)

  // Trades in time order, whole seconds spread through the second.
  const tOrder = stableOrder(trades.n, trades.tMs)
  const tradeMs = new Float64Array(trades.n)
  for (let i = 0; i < trades.n; ) {
    const t = trades.tMs[tOrder[i]!]!
    let j = i
    while (j < trades.n && trades.tMs[tOrder[j]!] === t) j++
    for (let k = i; k < j; k++) tradeMs[k] = trades.exactMs ? t : t + Math.floor(((k - i) * 1000) / (j - i))
    i = j
  }

  // Snapshots: consecutive levels with one (time, market) after a stable time sort.
  const snapT: number[] = []
  const snapMarket: number[] = []
  const snapStart: number[] = []
  const snapCount: number[] = []
  const lvIsAsk: number[] = []
  const lvPrice: number[] = []
  const lvSize: number[] = []
  if (levels !== null && levels.n > 0) {
    const levelMap = remap(levels.marketNames)
    const order = stableOrder(levels.n, levels.tMs)
    const groups = new Map<string, number[]>()
    const keys: string[] = []
    for (let k = 0; k < levels.n; k++) {
      const r = order[k]!
      const key = `${levels.tMs[r]}\u0000${levelMap[levels.market[r]!]}`
      let g = groups.get(key)
      if (g === undefined) {
        g = []
        groups.set(key, g)
        keys.push(key)
      }
      g.push(r)
    }
    for (const key of keys) {
      const rows = groups.get(key)!
      const r0 = rows[0]!
      const market = levelMap[levels.market[r0]!]!
      const bids = rows.filter((r) => levels.isAsk[r] === 0).sort((a, b) => levels.priceBps[b]! - levels.priceBps[a]!)
      const asks = rows.filter((r) => levels.isAsk[r] === 1).sort((a, b) => levels.priceBps[a]! - levels.priceBps[b]!)
      // Named as the loader names a bad value: the file, then the 1-based data rows involved.
      const file = levels.source ?? "snapshots"
      const at = `snapshot ${names[market]} at ${levels.tMs[r0]! / 1000}s`
      if (bids.length > 0 && asks.length > 0 && levels.priceBps[bids[0]!]! >= levels.priceBps[asks[0]!]!) {
        const [b, a] = [bids[0]!, asks[0]!]
        throw new BacktestInputError(`${file}: data rows ${Math.min(a, b) + 1} and ${Math.max(a, b) + 1}: ${at} is crossed: best bid ${levels.priceBps[b]} (data row ${b + 1}) ≥ best ask ${levels.priceBps[a]} (data row ${a + 1})`)
      }
      for (const side of [bids, asks]) {
        for (let k = 1; k < side.length; k++) {
          if (levels.priceBps[side[k]!] === levels.priceBps[side[k - 1]!]) {
            const [x, y] = [side[k - 1]!, side[k]!].sort((p, q) => p - q)
            throw new BacktestInputError(`${file}: data rows ${x! + 1} and ${y! + 1}: ${at} lists price ${levels.priceBps[side[k]!]} twice on one side`)
          }
        }
      }
      snapT.push(levels.tMs[r0]!)
      snapMarket.push(market)
      snapStart.push(lvPrice.length)
      snapCount.push(rows.length)
      for (const r of [...bids, ...asks]) {
        lvIsAsk.push(levels.isAsk[r]!)
        lvPrice.push(levels.priceBps[r]!)
        lvSize.push(levels.size[r]!)
      }
    }
  }

  // Order events in time order, by rank within one ms (file order otherwise).
  const nOrd = orders?.n ?? 0
  const oKey = new Float64Array(nOrd)
  for (let i = 0; i < nOrd; i++) oKey[i] = orders!.tMs[i]! * 8 + RANK[KIND_OF_EVENT[orders!.event[i]!]!]!
  const oOrder = stableOrder(nOrd, oKey)
  const orderMap = orders === null ? new Uint16Array(0) : remap(orders.marketNames)

  // Merge the three sorted streams by (time, rank).
  const count = trades.n + snapT.length + nOrd
  const d: Dataset = {
    source,
    markets: names,
    count,
    trades: trades.n,
    snapshots: snapT.length,
    orders: nOrd,
    owners: orders?.ownerNames ?? [],
    tMs: new Float64Array(count),
    market: new Uint16Array(count),
    kind: new Uint8Array(count),
    side: new Uint8Array(count),
    priceBps: new Uint16Array(count),
    size: new Int32Array(count),
    orderId: new Float64Array(nOrd === 0 ? 0 : count),
    owner: new Int32Array(nOrd === 0 ? 0 : count),
    orderType: new Uint8Array(nOrd === 0 ? 0 : count),
    levelStart: new Int32Array(count),
    levelIsAsk: Uint8Array.from(lvIsAsk),
    levelPrice: Uint16Array.from(lvPrice),
    levelSize: Int32Array.from(lvSize),
    ...tradeWarnings(trades, tOrder),
    bunching: { medianEvents: 0, thresholdEvents: 0, stretches: [] }
  }
  let ti = 0
  let si = 0
  let oi = 0
  const before = (t1: number, k1: number, t2: number, k2: number): boolean => t1 < t2 || (t1 === t2 && RANK[k1]! < RANK[k2]!)
  for (let e = 0; e < count; e++) {
    let kind = -1
    let t = Number.POSITIVE_INFINITY
    if (si < snapT.length) {
      kind = KIND_SNAPSHOT
      t = snapT[si]!
    }
    if (oi < nOrd) {
      const r = oOrder[oi]!
      const k = KIND_OF_EVENT[orders!.event[r]!]!
      if (kind < 0 || before(orders!.tMs[r]!, k, t, kind)) {
        kind = k
        t = orders!.tMs[r]!
      }
    }
    if (ti < trades.n && (kind < 0 || before(tradeMs[ti]!, KIND_TRADE, t, kind))) {
      kind = KIND_TRADE
      t = tradeMs[ti]!
    }
    d.tMs[e] = t
    d.kind[e] = kind
    if (kind === KIND_SNAPSHOT) {
      d.market[e] = snapMarket[si]!
      d.size[e] = snapCount[si]!
      d.levelStart[e] = snapStart[si]!
      si++
    } else if (kind === KIND_TRADE) {
      const r = tOrder[ti]!
      d.market[e] = tradeMap[trades.market[r]!]!
      d.side[e] = trades.side[r]!
      d.priceBps[e] = trades.priceBps[r]!
      d.size[e] = trades.size[r]!
      // A trade's orderId is the resting order it filled (NaN when the data does not say).
      if (nOrd > 0) d.orderId[e] = trades.makerOrderId?.[r] ?? Number.NaN
      ti++
    } else {
      const r = oOrder[oi]!
      d.market[e] = orderMap[orders!.market[r]!]!
      d.side[e] = orders!.isAsk[r]!
      d.priceBps[e] = orders!.priceBps[r]!
      d.size[e] = orders!.size[r]!
      d.orderId[e] = orders!.orderId[r]!
      d.owner[e] = orders!.owner[r]!
      d.orderType[e] = orders!.orderType[r]!
      oi++
    }
  }
  if (count === 0) throw new BacktestInputError(`${source}: no trades`)
  const bunching = findBunching(d.tMs, count)
  const bunched = bunchingWarning(bunching)
  return { ...d, bunching, warnings: bunched === null ? d.warnings : [...d.warnings, bunched] }
}

/** Copies every column onto SharedArrayBuffers so sweep workers read one copy. */
export const shareDataset = (d: Dataset): Dataset => {
  type Column = Float64Array | Uint16Array | Uint8Array | Int32Array
  const share = <T extends Column>(a: T, make: (b: SharedArrayBuffer) => T): T => {
    const out = make(new SharedArrayBuffer(a.byteLength))
    out.set(a as never)
    return out
  }
  return {
    ...d,
    tMs: share(d.tMs, (b) => new Float64Array(b)),
    market: share(d.market, (b) => new Uint16Array(b)),
    kind: share(d.kind, (b) => new Uint8Array(b)),
    side: share(d.side, (b) => new Uint8Array(b)),
    priceBps: share(d.priceBps, (b) => new Uint16Array(b)),
    size: share(d.size, (b) => new Int32Array(b)),
    orderId: share(d.orderId, (b) => new Float64Array(b)),
    owner: share(d.owner, (b) => new Int32Array(b)),
    orderType: share(d.orderType, (b) => new Uint8Array(b)),
    levelStart: share(d.levelStart, (b) => new Int32Array(b)),
    levelIsAsk: share(d.levelIsAsk, (b) => new Uint8Array(b)),
    levelPrice: share(d.levelPrice, (b) => new Uint16Array(b)),
    levelSize: share(d.levelSize, (b) => new Int32Array(b))
  }
}

/** Row forms, for tests and small hand-built cases. */
export interface TradeRow { readonly tsMs: number; readonly marketId: string; readonly priceBps: number; readonly size: number; readonly takerSide: "buy" | "sell"; readonly makerOrderId?: number }
export interface LevelRow { readonly tsMs: number; readonly marketId: string; readonly side: "bid" | "ask"; readonly priceBps: number; readonly size: number }
export interface OrderRow {
  readonly tsMs: number; readonly marketId: string; readonly orderId: number; readonly event: "new" | "add" | "cancel"
  readonly side: "bid" | "ask"; readonly priceBps: number; readonly size: number; readonly owner: string
  readonly orderType?: (typeof ORDER_TYPES)[number]
}

export const orderColumnsFromRows = (rows: ReadonlyArray<OrderRow>): OrderColumns => {
  const marketNames = [...new Set(rows.map((o) => o.marketId))]
  const ownerNames = [...new Set(rows.map((o) => o.owner))]
  return {
    n: rows.length,
    tMs: Float64Array.from(rows.map((o) => o.tsMs)),
    marketNames,
    market: Uint16Array.from(rows.map((o) => marketNames.indexOf(o.marketId))),
    orderId: Float64Array.from(rows.map((o) => o.orderId)),
    event: Uint8Array.from(rows.map((o) => (o.event === "cancel" ? EVENT_CANCEL : o.event === "new" ? EVENT_NEW : EVENT_ADD))),
    orderType: Uint8Array.from(rows.map((o) => ORDER_TYPES.indexOf(o.orderType ?? "gtc"))),
    isAsk: Uint8Array.from(rows.map((o) => (o.side === "ask" ? 1 : 0))),
    priceBps: Uint16Array.from(rows.map((o) => o.priceBps)),
    size: Int32Array.from(rows.map((o) => o.size)),
    ownerNames,
    owner: Int32Array.from(rows.map((o) => ownerNames.indexOf(o.owner)))
  }
}

export const datasetFromRows = (source: string, trades: ReadonlyArray<TradeRow>, levels: ReadonlyArray<LevelRow> = [], orders: ReadonlyArray<OrderRow> = []): Dataset => {
  const tNames = [...new Set(trades.map((t) => t.marketId))]
  const lNames = [...new Set(levels.map((l) => l.marketId))]
  return buildDataset(
    source,
    {
      n: trades.length,
      exactMs: true,
      tMs: Float64Array.from(trades.map((t) => t.tsMs)),
      marketNames: tNames,
      market: Uint16Array.from(trades.map((t) => tNames.indexOf(t.marketId))),
      priceBps: Uint16Array.from(trades.map((t) => t.priceBps)),
      size: Int32Array.from(trades.map((t) => t.size)),
      side: Uint8Array.from(trades.map((t) => (t.takerSide === "buy" ? TAKER_BUY : TAKER_SELL))),
      makerOrderId: trades.some((t) => t.makerOrderId !== undefined) ? Float64Array.from(trades.map((t) => t.makerOrderId ?? Number.NaN)) : null
    },
    levels.length === 0
      ? null
      : {
          n: levels.length,
          tMs: Float64Array.from(levels.map((l) => l.tsMs)),
          marketNames: lNames,
          market: Uint16Array.from(levels.map((l) => lNames.indexOf(l.marketId))),
          isAsk: Uint8Array.from(levels.map((l) => (l.side === "ask" ? 1 : 0))),
          priceBps: Uint16Array.from(levels.map((l) => l.priceBps)),
          size: Int32Array.from(levels.map((l) => l.size))
        },
    orders.length === 0 ? null : orderColumnsFromRows(orders)
  )
}
