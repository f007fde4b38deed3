// Money and price formatting for the page, and the order ticket's cost preview. Integers in,
// strings out: prices are bps (100 bps = 1¢), money is micro-USDC (1 USDC = 1,000,000 micro).
// Parsing goes from the typed text straight to integers, never through a float.
import { feeCeilMicro, MAX_PRICE_BPS, MICRO_PER_BPS, MICRO_PER_CONTRACT, MIN_NOTIONAL_MICRO } from "../../src/engine/money.ts"

const group = (digits: string): string => digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",")

/** 5250 → "52.5¢", 5000 → "50¢", 1 → "0.01¢". */
export const formatCents = (priceBps: number): string => {
  // A mid between two levels may end in .5 bps.
  if (!Number.isInteger(priceBps)) return `${(priceBps / 100).toFixed(3).replace(/0+$/, "")}¢`
  const whole = Math.trunc(priceBps / 100)
  const frac = Math.abs(priceBps % 100)
  if (frac === 0) return `${whole}¢`
  return `${whole}.${String(frac).padStart(2, "0").replace(/0$/, "")}¢`
}

/**
 * Micro-USDC as dollars, always to the cent (the page never shows a sub-cent amount such as
 * "$0.5005"): 1_234_567_890 → "$1,234.57". `round` says which way: "nearest" (the default, half
 * a cent up in magnitude), "up" (towards +∞: a cost the order never exceeds) or "down" (towards
 * −∞: proceeds or profit it never falls below). An amount that is not zero but rounds to zero
 * reads "<$0.01", so a small rebate does not look like nothing. Negative: "−$1.50".
 */
export const formatUsd = (micro: number, opts: { round?: "nearest" | "up" | "down"; sign?: boolean } = {}): string => {
  const round = opts.round ?? "nearest"
  const cents =
    round === "up" ? Math.ceil(micro / 10_000) : round === "down" ? Math.floor(micro / 10_000) : Math.sign(micro) * Math.floor((Math.abs(micro) + 5_000) / 10_000)
  const neg = cents < 0 || (cents === 0 && micro < 0)
  const prefix = neg ? "−" : opts.sign === true && micro > 0 ? "+" : ""
  if (cents === 0 && micro !== 0) return `${prefix}<$0.01`
  const abs = Math.abs(cents)
  return `${prefix}$${group(String(Math.floor(abs / 100)))}.${String(abs % 100).padStart(2, "0")}`
}

/** "12.5" or "12.50" or "$1,000" → micro; null when not a non-negative amount with ≤ 6 decimals. */
export const parseUsdToMicro = (text: string): number | null => {
  const t = text.trim().replace(/^\$/, "").replace(/,/g, "")
  const m = /^(\d{1,12})(?:\.(\d{0,6}))?$/.exec(t)
  if (m === null) return null
  return Number(m[1]) * MICRO_PER_CONTRACT + Number((m[2] ?? "").padEnd(6, "0"))
}

/** "52" → 5200, "52.5" → 5250 (cents with up to two decimals); null outside 0..100¢ or malformed. */
export const parseCentsToBps = (text: string): number | null => {
  const m = /^(\d{1,3})(?:\.(\d{0,2}))?$/.exec(text.trim().replace(/¢$/, ""))
  if (m === null) return null
  const bps = Number(m[1]) * 100 + Number((m[2] ?? "").padEnd(2, "0"))
  return bps > MAX_PRICE_BPS ? null : bps
}

/** A YES probability 0..1 (positions, candles) as cents: 0.525 → "52.5¢". */
export const formatProb = (p: number | null): string => (p === null ? "—" : formatCents(Math.round(p * MAX_PRICE_BPS)))

export interface TicketInput {
  readonly side: "buy" | "sell"
  /** Own-outcome price (a NO order's price is the NO price). */
  readonly priceBps: number
  readonly size: number
  readonly takerFeeBps: number
}

export type TicketPreview =
  | { readonly ok: false; readonly problem: string }
  | {
      readonly ok: true
      /** Buy: the most the order can cost (price + taker fee if it takes). Sell: what it receives before fees. */
      readonly notionalMicro: number
      /** The most it can be charged in taker fees. */
      readonly maxFeeMicro: number
      /** Buy: paid if the outcome wins (1 USDC a contract). */
      readonly payoutMicro: number
      /** Buy: payout − cost (at the worst fee). Sell: proceeds − max fee. */
      readonly netMicro: number
    }

/** The order ticket's preview: what placing this order can cost or bring, in integers. */
export const previewOrder = (t: TicketInput): TicketPreview => {
  if (!Number.isSafeInteger(t.size) || t.size < 1) return { ok: false, problem: "Size must be a whole number of contracts, at least 1." }
  if (!Number.isSafeInteger(t.priceBps) || t.priceBps < 1 || t.priceBps > MAX_PRICE_BPS - 1) return { ok: false, problem: "Price must be between 0.01¢ and 99.99¢." }
  const notional = t.size * t.priceBps * MICRO_PER_BPS
  if (notional < MIN_NOTIONAL_MICRO) return { ok: false, problem: "Order too small: size × price must be at least 1¢." }
  const fee = feeCeilMicro(t.size, t.priceBps, t.takerFeeBps)
  if (t.side === "buy") {
    const payout = t.size * MICRO_PER_CONTRACT
    return { ok: true, notionalMicro: notional + fee, maxFeeMicro: fee, payoutMicro: payout, netMicro: payout - notional - fee }
  }
  return { ok: true, notionalMicro: notional, maxFeeMicro: fee, payoutMicro: 0, netMicro: notional - fee }
}

/** Unix seconds → "2026-11-25 01:15" (UTC). */
export const formatTime = (sec: number | null | undefined): string =>
  sec === null || sec === undefined ? "—" : new Date(sec * 1000).toISOString().slice(0, 16).replace("T", " ")

export const shortKey = (k: string): string => (k.length <= 12 ? k : `${k.slice(0, 6)}…${k.slice(-4)}`)
