// Markets list: category, search, status and sort; multi-outcome (neg_risk) events grouped
// with their outcomes, each a tradable market.
import { useEffect, useState } from "preact/hooks"
import type { Market } from "../../../src/client/types.ts"
import { formatCents, formatTime, formatUsd } from "../format.ts"
import { rememberMarkets } from "../market-names.tsx"
import { apiUrl, getJson } from "../session.ts"

/**
 * The market's YES mid from its book: what the crowd prices the outcome at. A one-sided book
 * shows the side it has ("bid 45¢"); an empty one says "no quotes" in words, not a bare dash.
 */
const Chance = ({ marketId }: { marketId: string }) => {
  const [book, setBook] = useState<{ bid: number | null; ask: number | null } | null | undefined>(undefined)
  useEffect(() => {
    let live = true
    getJson<{ bids: { price: number }[]; asks: { price: number }[] }>(apiUrl(`/v1/markets/${encodeURIComponent(marketId)}/book`))
      .then((b) => live && setBook({ bid: b.bids[0]?.price ?? null, ask: b.asks[0]?.price ?? null }))
      .catch(() => live && setBook(null))
    return () => {
      live = false
    }
  }, [marketId])
  const text =
    book === undefined ? "" : book === null ? "book unavailable"
    : book.bid !== null && book.ask !== null ? formatCents((book.bid + book.ask) / 2)
    : book.bid !== null ? `bid ${formatCents(book.bid)}`
    : book.ask !== null ? `ask ${formatCents(book.ask)}`
    : "no quotes"
  const mid = book != null && book.bid !== null && book.ask !== null
  return <span class={mid ? "chance" : "chance none"} title={mid ? "YES mid of the book" : "no two-sided quotes in the book right now"} data-testid="chance">{text}</span>
}

const CATEGORIES = ["", "BTC", "ETH", "DOGE", "SOL", "XRP", "BNB", "Sports", "Politics", "Culture"]

// One piece: a page component: its hooks, then its markup top to bottom.
export const MarketsPage = () => {
  const [category, setCategory] = useState("")
  const [search, setSearch] = useState("")
  const [status, setStatus] = useState("active")
  const [order, setOrder] = useState("volume")
  const [markets, setMarkets] = useState<ReadonlyArray<Market> | null>(null)
  const [error, setError] = useState<string | null>(null)

  useEffect(() => {
    const q = new URLSearchParams({ status, order, limit: "200" })
    if (category !== "") q.set("category", category)
    if (search.trim() !== "") q.set("search", search.trim())
    let live = true
    const h = setTimeout(() => {
      getJson<{ markets: Market[] }>(apiUrl(`/v1/markets?${q}`))
        .then((r) => {
          if (!live) return
          rememberMarkets(r.markets)
          setMarkets(r.markets)
          setError(null)
        })
        .catch((e: Error) => live && setError(e.message))
    }, 150)
    return () => {
      live = false
      clearTimeout(h)
    }
  }, [category, search, status, order])

  return (
    <section>
      <h1>Markets</h1>
      <div class="filters">
        <label class="sr-only" for="market-search">Search markets</label>
        <input id="market-search" type="search" placeholder="Search questions" value={search} onInput={(e) => setSearch((e.target as HTMLInputElement).value)} data-testid="market-search" />
        <select value={category} onChange={(e) => setCategory((e.target as HTMLSelectElement).value)} aria-label="Category" data-testid="market-category">
          {CATEGORIES.map((c) => <option value={c}>{c === "" ? "All categories" : c}</option>)}
        </select>
        <select value={status} onChange={(e) => setStatus((e.target as HTMLSelectElement).value)} aria-label="Status">
          <option value="active">Active</option>
          <option value="halted">Halted</option>
          <option value="resolved">Resolved</option>
        </select>
        <select value={order} onChange={(e) => setOrder((e.target as HTMLSelectElement).value)} aria-label="Sort">
          <option value="volume">Volume</option>
          <option value="expiry">Ending soon</option>
          <option value="created_at">Newest</option>
        </select>
      </div>
      {error !== null && <p class="error">{error}</p>}
      {markets === null ? (
        <p class="muted">Loading…</p>
      ) : markets.length === 0 ? (
        <p class="muted">No markets match.</p>
      ) : (
        <div class="grid" data-testid="market-list">
          {markets.map((m) => (
            <article class="card market-card" data-testid="market-card">
              <div class="meta">
                <span class="tag">{m.category}</span>
                {m.neg_risk && <span class="tag alt">{m.outcomes.length} outcomes</span>}
                <span class="muted">ends {formatTime(m.expiry)}</span>
              </div>
              {m.outcomes.length <= 1 || !m.neg_risk ? (
                <div class="row-q">
                  <a class="question" href={`#/m/${encodeURIComponent(m.outcomes[0]?.market_id ?? m.event_id)}`}>{m.question}</a>
                  {m.outcomes[0] !== undefined && <Chance marketId={m.outcomes[0].market_id} />}
                </div>
              ) : (
                <>
                  <div class="question">{m.question}</div>
                  <ul class="outcomes">
                    {m.outcomes.map((o) => (
                      <li>
                        <a href={`#/m/${encodeURIComponent(o.market_id)}`}>{o.label ?? o.question}</a>
                        <Chance marketId={o.market_id} />
                      </li>
                    ))}
                  </ul>
                </>
              )}
              <div class="muted small">Volume {formatUsd(m.volume)} · {m.status}</div>
            </article>
          ))}
        </div>
      )}
    </section>
  )
}
