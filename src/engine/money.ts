// Integer money math. One contract pays 1 USDC = 1,000,000 micro when it wins,
// so `size` contracts at `priceBps` cost size * priceBps * 100 micro.
// Rounding is always in the system's favour: fees charged round up, rebates
// paid round down, so no rounding ever creates money.

export const MAX_PRICE_BPS = 10_000
export const MICRO_PER_CONTRACT = 1_000_000
export const MICRO_PER_BPS = 100
/** Orders below one cent of notional are dust. */
export const MIN_NOTIONAL_MICRO = 10_000
/** Keeps size * priceBps * feeBps (≤ 1e8 · 1e4 · 1e3) a safe integer. */
export const MAX_ORDER_SIZE = 100_000_000
export const MAX_FEE_BPS = 1_000
/** One credit or debit at most: one billion USDC. */
export const MAX_AMOUNT_MICRO = 1_000_000_000_000_000
/** Balances stay far below 2^53 so sums of them stay exact. */
export const MAX_BALANCE_MICRO = 2 ** 51

export const DEFAULT_MAKER_REBATE_BPS = 5
export const DEFAULT_TAKER_FEE_BPS = 0

/** The house account: taker fees in, maker rebates out. Not a valid base58 key, so no user can own it. */
export const FEE_ACCOUNT = "$fees"

export const notionalMicro = (size: number, priceBps: number): number => size * priceBps * MICRO_PER_BPS

/** Fee on a notional of size·priceBps·100, rounded up: ceil(size·priceBps·feeBps / 100). */
export const feeCeilMicro = (size: number, priceBps: number, feeBps: number): number => {
  const scaled = size * priceBps * feeBps
  return scaled === 0 ? 0 : Math.floor((scaled + 99) / 100)
}

/** Rebate on a notional, rounded down: floor(size·priceBps·rebateBps / 100). */
export const rebateFloorMicro = (size: number, priceBps: number, rebateBps: number): number =>
  Math.floor((size * priceBps * rebateBps) / 100)

/**
 * What one contract of a buy order can cost at most: its price plus the fees
 * it may be charged, each rounded up per contract. Summed per-fill fees never
 * exceed this (ceil(m·x) ≤ m·ceil(x)), so the lock always covers the cost.
 */
export const buyLockPerContractMicro = (priceBps: number, takerFeeBps: number, builderFeeBps: number): number =>
  priceBps * MICRO_PER_BPS + feeCeilMicro(1, priceBps, takerFeeBps) + feeCeilMicro(1, priceBps, builderFeeBps)

/** floor(a·b / c) exactly, falling back to BigInt when a·b leaves the safe range. */
export const mulDivFloor = (a: number, b: number, c: number): number => {
  const product = a * b
  if (Number.isSafeInteger(product)) return Math.floor(product / c)
  return Number((BigInt(a) * BigInt(b)) / BigInt(c))
}

export const isIntIn = (value: unknown, min: number, max: number): value is number =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= min && value <= max
