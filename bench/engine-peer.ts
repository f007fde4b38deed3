// The peer: nodejs-order-book driven with the engine workload's order flow.
// It is a bare matching book (no ledger, no fees, no events), so this is the
// cost of matching alone; our engine also does accounting on every command.
import {
  type LimitOrderOptions,
  OrderBook,
  SelfTradePreventionMode,
  Side
} from "nodejs-order-book"
import { MAX_PRICE_BPS } from "../src/engine/index.ts"
import type { Workload } from "./engine-workload.ts"

type TimeInForce = NonNullable<LimitOrderOptions["timeInForce"]>
const GTC = "GTC" as TimeInForce
const IOC = "IOC" as TimeInForce

export interface PeerOps {
  /** 0: limit order (arg is its options), 1: cancel (arg is the order id). */
  readonly kind: Uint8Array
  readonly book: Uint8Array
  readonly arg: ReadonlyArray<LimitOrderOptions | string>
  readonly measuredFrom: number
  readonly length: number
}

/**
 * Translates our YES-term book one to one: bid/ask at the YES price, same size,
 * same id, IOC as IOC. STP is EXPIRE_MAKER per account, which is exactly our
 * default `cancel_resting`, so both books evolve identically.
 */
export const translateForPeer = (w: Workload): PeerOps => {
  const n = w.commands.length
  const kind = new Uint8Array(n)
  const book = new Uint8Array(n)
  const arg: Array<LimitOrderOptions | string> = []
  let measuredFrom = -1
  for (let i = 0; i < n; i++) {
    if (i === w.measuredFrom) measuredFrom = arg.length
    const c = w.commands[i]!
    if (w.rejected[i] === 1) continue
    if (c.type === "place_order") {
      const isBid = (c.side === "buy") === (c.outcome === "yes")
      book[arg.length] = w.market[i]!
      kind[arg.length] = 0
      arg.push({
        id: String(w.orderIds[i]),
        side: isBid ? Side.BUY : Side.SELL,
        size: c.size,
        price: c.outcome === "yes" ? c.priceBps : MAX_PRICE_BPS - c.priceBps,
        timeInForce: c.orderType === "ioc" ? IOC : GTC,
        accountId: c.user,
        stpMode: SelfTradePreventionMode.EXPIRE_MAKER
      })
    } else if (c.type === "cancel_order") {
      book[arg.length] = w.market[i]!
      kind[arg.length] = 1
      arg.push(String(c.orderId))
    }
  }
  return { kind, book, arg, measuredFrom, length: arg.length }
}

export const newPeerBooks = (markets: number): OrderBook[] => Array.from({ length: markets }, () => new OrderBook())

/** Applies ops [from, to) and returns how many the peer refused (unknown id, bad order…). */
export const runPeer = (books: OrderBook[], ops: PeerOps, from: number, to: number): number => {
  const { kind, book, arg } = ops
  let refused = 0
  for (let i = from; i < to; i++) {
    const b = books[book[i]!]!
    if (kind[i] === 0) {
      if (b.limit(arg[i] as LimitOrderOptions).err !== null) refused++
    } else if (b.cancel(arg[i] as string) === undefined) refused++
  }
  return refused
}

/** One op at a time, for latency sampling; returns the per-op times in ns. */
export const timePeer = (books: OrderBook[], ops: PeerOps, from: number, to: number, overheadNs: number): Float64Array => {
  const { kind, book, arg } = ops
  const samples = new Float64Array(to - from)
  for (let i = from; i < to; i++) {
    const b = books[book[i]!]!
    const isLimit = kind[i] === 0
    const a = arg[i]!
    const t0 = process.hrtime.bigint()
    if (isLimit) b.limit(a as LimitOrderOptions)
    else b.cancel(a as string)
    samples[i - from] = Math.max(0, Number(process.hrtime.bigint() - t0) - overheadNs)
  }
  return samples
}

/** Full depth of each peer book, best first, in the same shape as ours for comparison. */
export const peerDepth = (b: OrderBook): string => {
  const [asks, bids] = b.depth()
  return JSON.stringify({ bids, asks })
}
