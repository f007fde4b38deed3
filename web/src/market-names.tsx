// The question of each market the page shows by id (positions, open orders, trade history). The
// `user:` channel's positions and the trade lists carry only ids and slugs, so the question is
// read once per market (`GET /v1/markets/{id}`, which names every outcome of its event) and kept
// for the page's life: a position that arrives live is named at once, not after a reload.
import { signal } from "@preact/signals"
import type { Market } from "../../src/client/types.ts"
import { apiUrl, getJson } from "./session.ts"

const names = signal<ReadonlyMap<string, string>>(new Map())
/** Ids asked for (or failed): each is read at most once. */
const asked = new Set<string>()

/** Notes every outcome of an event the page has read anyway (the markets list, a market page). */
export const rememberMarkets = (events: ReadonlyArray<Market>): void => {
  const next = new Map(names.value)
  let added = false
  for (const ev of events) {
    for (const o of ev.outcomes) {
      const q = o.question // a multi-outcome event's outcome reads "<event question> — <label>"
      if (next.get(o.market_id) !== q) {
        next.set(o.market_id, q)
        added = true
      }
    }
  }
  if (added) names.value = next
}

/** Notes names the page got with other data (the REST positions carry each market's question). */
export const rememberNames = (pairs: ReadonlyArray<readonly [string, string | null | undefined]>): void => {
  const fresh = pairs.filter((p): p is readonly [string, string] => typeof p[1] === "string" && names.value.get(p[0]) !== p[1])
  if (fresh.length > 0) names.value = new Map([...names.value, ...fresh])
}

/** The market's question, or undefined while it is being read (a component reading this re-renders when it arrives). */
export const marketName = (marketId: string): string | undefined => {
  const known = names.value.get(marketId)
  if (known !== undefined || asked.has(marketId)) return known
  asked.add(marketId)
  void getJson<Market>(apiUrl(`/v1/markets/${encodeURIComponent(marketId)}`))
    .then((ev) => rememberMarkets([ev]))
    .catch(() => {}) // unnamed: the caller's fallback (the slug, a short id) stays
  return undefined
}

/** A link to the market, named by its question (the fallback until it is known). */
export const MarketLink = ({ marketId, fallback }: { marketId: string; fallback?: string | null | undefined }) => (
  <a href={`#/m/${encodeURIComponent(marketId)}`} data-testid="market-name">
    {marketName(marketId) ?? fallback ?? `${marketId.slice(0, 10)}…`}
  </a>
)
