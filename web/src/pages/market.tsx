// One market: live book, recent trades and candles (REST first, then the WebSocket), the order
// ticket, and the user's open orders here with cancel and cancel-all.
import { useEffect, useRef, useState } from "preact/hooks"
import type { Market, OutcomeMarket } from "../../../src/client/types.ts"
import { MAX_PRICE_BPS } from "../../../src/engine/money.ts"
import { subscribe } from "../feed.ts"
import { formatCents, formatTime, formatUsd, parseCentsToBps, previewOrder } from "../format.ts"
import { MarketLink, rememberMarkets } from "../market-names.tsx"
import { openOrders, portfolioVersion } from "../portfolio-store.ts"
import { apiUrl, getJson, key, notifyHere } from "../session.ts"
import { cancelAll, cancelOrder, placeOrder } from "../trade.ts"

/** The browser's language when Intl accepts it, else "en-US". */
const chartLocale = (): string => {
  try {
    return Intl.DateTimeFormat.supportedLocalesOf([navigator.language]).length > 0 ? navigator.language : "en-US"
  } catch {
    return "en-US"
  }
}

interface Level { readonly price: number; readonly size: number }
interface Book { readonly bids: ReadonlyArray<Level>; readonly asks: ReadonlyArray<Level>; readonly ts: number }
interface TradeRow { readonly id: number; readonly price: number; readonly yes_price?: number; readonly size: number; readonly side: string; readonly outcome?: string; readonly time: number }

const useMarket = (marketId: string): { event: Market | null; outcome: OutcomeMarket | null; error: string | null } => {
  const [state, setState] = useState<{ event: Market | null; outcome: OutcomeMarket | null; error: string | null }>({ event: null, outcome: null, error: null })
  useEffect(() => {
    getJson<Market>(apiUrl(`/v1/markets/${encodeURIComponent(marketId)}`))
      .then((ev) => {
        rememberMarkets([ev])
        const id = marketId.toLowerCase().replace(/^0x/, "")
        const outcome = ev.outcomes.find((o) => o.market_id.toLowerCase().replace(/^0x/, "") === id || o.slug === marketId) ?? ev.outcomes[0] ?? null
        setState({ event: ev, outcome, error: null })
      })
      .catch((e: Error) => setState({ event: null, outcome: null, error: e.message }))
  }, [marketId])
  return state
}

/** The market's live book: seeded from REST by the feed, then every pushed snapshot. */
const useBook = (marketId: string): Book | null => {
  const [book, setBook] = useState<Book | null>(null)
  useEffect(() => {
    setBook(null)
    return subscribe(`book:${marketId}`, (e) => {
      if (e.type === "book" && e.marketId === marketId) setBook(e.book)
    })
  }, [marketId])
  return book
}

const BookView = ({ marketId }: { marketId: string }) => {
  const book = useBook(marketId)
  const mine = new Set(openOrders.value.filter((o) => o.market_id === marketId).map((o) => (o.outcome === "yes" ? o.price : MAX_PRICE_BPS - o.price)))
  const asks = (book?.asks ?? []).slice(0, 10)
  const bids = (book?.bids ?? []).slice(0, 10)
  const bestBid = bids[0]?.price
  const bestAsk = asks[0]?.price
  return (
    <div class="card" data-testid="book" data-ts={book?.ts ?? 0}>
      <h2>Order book <span class="muted small">YES price · NO = 100¢ − YES</span></h2>
      <table class="book">
        <thead><tr><th>Price</th><th>Contracts</th></tr></thead>
        <tbody>
          {[...asks].reverse().map((l) => (
            <tr class="ask" data-testid="book-ask" data-price={l.price} data-size={l.size}>
              <td>{formatCents(l.price)}{mine.has(l.price) ? " •" : ""}</td><td>{l.size}</td>
            </tr>
          ))}
          <tr class="spread"><td colSpan={2}>{bestBid !== undefined && bestAsk !== undefined ? `spread ${formatCents(bestAsk - bestBid)} · mid ${formatCents((bestAsk + bestBid) / 2)}` : asks.length + bids.length === 0 ? "empty book" : "one-sided book"}</td></tr>
          {bids.map((l) => (
            <tr class="bid" data-testid="book-bid" data-price={l.price} data-size={l.size}>
              <td>{formatCents(l.price)}{mine.has(l.price) ? " •" : ""}</td><td>{l.size}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="muted small">• your order at that price</p>
    </div>
  )
}

const TradesView = ({ marketId }: { marketId: string }) => {
  const [trades, setTrades] = useState<ReadonlyArray<TradeRow>>([])
  useEffect(() => {
    setTrades([])
    return subscribe(`trades:${marketId}`, (e) => {
      if (e.type === "trades" && e.marketId === marketId) setTrades(e.trades.slice(0, 30))
      else if (e.type === "trade" && e.marketId === marketId) setTrades((t) => [e.trade, ...t.filter((x) => x.id !== e.trade.id)].slice(0, 30))
    })
  }, [marketId])
  return (
    <div class="card">
      <h2>Recent trades</h2>
      {trades.length === 0 ? <p class="muted">No trades yet.</p> : (
        <table data-testid="trades">
          <thead><tr><th>YES price</th><th>Size</th><th>Taker</th><th>Time (UTC)</th></tr></thead>
          <tbody>
            {trades.map((t) => (
              <tr><td>{formatCents(t.yes_price ?? t.price)}</td><td>{t.size}</td><td>{t.side} {t.outcome ?? ""}</td><td>{formatTime(t.time)}</td></tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  )
}

const INTERVALS = ["1m", "5m", "1h", "1d"] as const
type Interval = (typeof INTERVALS)[number]
const WIDTH_SEC: Readonly<Record<Interval, number>> = { "1m": 60, "5m": 300, "1h": 3600, "1d": 86_400 }
/** The narrowest price range the axis shows (4¢): one trade, or a flat series, gets a few distinct labels instead of six "40.0¢". */
const MIN_AXIS_SPAN = 0.04

interface Bar { time: number; open: number; high: number; low: number; close: number }

/**
 * Candles from the feed: REST gives the history (edge-cached for up to 5 s at 1m, so it may lag),
 * and every trade the feed holds or pushes is folded into its bucket as the server does
 * (src/service/history.ts). Folding is idempotent for high, low and close (applied in trade-id
 * order), so a trade the REST answer already counted changes nothing.
 */
const foldTrade = (bars: Bar[], t: { id: number; time: number; price: number; yes_price?: number; outcome?: string }, widthSec: number): Bar | null => {
  const p = (t.yes_price ?? (t.outcome === "no" ? MAX_PRICE_BPS - t.price : t.price)) / MAX_PRICE_BPS
  const time = t.time - (t.time % widthSec)
  const last = bars[bars.length - 1]
  if (last !== undefined && last.time === time) {
    last.high = Math.max(last.high, p)
    last.low = Math.min(last.low, p)
    last.close = p
    return last
  }
  if (last !== undefined && last.time > time) {
    // An older bucket (REST holds it): widen it if the trade is outside, never reorder the series.
    const bar = bars.find((b) => b.time === time)
    if (bar !== undefined) {
      bar.high = Math.max(bar.high, p)
      bar.low = Math.min(bar.low, p)
    }
    return null
  }
  const bar = { time, open: p, high: p, low: p, close: p }
  bars.push(bar)
  return bar
}

// One piece: a component: the chart's life cycle (create, feed, resize, dispose) around one chart instance.
const Candles = ({ marketId }: { marketId: string }) => {
  const el = useRef<HTMLDivElement>(null)
  const [interval, setIv] = useState<Interval>("1m")
  const [count, setCount] = useState<number | null>(null)
  useEffect(() => {
    let disposed = false
    let cleanup = (): void => {}
    void (async () => {
      // The chart library is loaded only on market pages (it is not in the initial bundle).
      const lc = await import("lightweight-charts")
      if (disposed || el.current === null) return
      const chart = lc.createChart(el.current, {
        height: 220,
        layout: { background: { color: "transparent" }, textColor: "#334155", attributionLogo: false },
        grid: { vertLines: { color: "#eef2f7" }, horzLines: { color: "#eef2f7" } },
        // A few empty bars on the right: the newest (perhaps only) candle and its time label are not cut at the edge.
        timeScale: { timeVisible: true, secondsVisible: false, rightOffset: 4, barSpacing: 10 },
        // The chart formats times with navigator.language, which Intl may refuse (Chromium under LANG=C says "en-US@posix").
        localization: { locale: chartLocale() },
        rightPriceScale: { scaleMargins: { top: 0.1, bottom: 0.1 } },
        autoSize: true
      })
      const series = chart.addSeries(lc.CandlestickSeries, {
        priceFormat: { type: "custom", formatter: (p: number) => formatCents(Math.round(p * MAX_PRICE_BPS)), minMove: 0.0001 },
        autoscaleInfoProvider: (original: () => { priceRange: { minValue: number; maxValue: number } | null } | null) => {
          const r = original()
          if (r === null || r.priceRange === null || r.priceRange.maxValue - r.priceRange.minValue >= MIN_AXIS_SPAN) return r
          const mid = (r.priceRange.minValue + r.priceRange.maxValue) / 2
          const lo = Math.min(Math.max(0, mid - MIN_AXIS_SPAN / 2), 1 - MIN_AXIS_SPAN)
          return { ...r, priceRange: { minValue: lo, maxValue: lo + MIN_AXIS_SPAN } }
        }
      })
      const widthSec = WIDTH_SEC[interval]
      let bars: Bar[] = []
      let restLoaded = false
      const seen = new Map<number, FeedTradeRow>()
      const foldAll = () => {
        for (const t of [...seen.values()].sort((a, b) => a.id - b.id)) foldTrade(bars, t, widthSec)
        series.setData(bars.map((b) => ({ ...b, time: b.time as never })))
        setCount(bars.length)
      }
      // Subscribe first: a trade that lands while the REST read is on its way is folded in after it.
      const unsub = subscribe(`trades:${marketId}`, (e) => {
        if (disposed || !(e.type === "trades" || e.type === "trade") || e.marketId !== marketId) return
        if (e.type === "trades") {
          for (const t of e.trades) seen.set(t.id, t)
          if (restLoaded) foldAll()
        } else if (e.type === "trade") {
          seen.set(e.trade.id, e.trade)
          if (!restLoaded) return
          const bar = foldTrade(bars, e.trade, widthSec)
          if (bar !== null) series.update({ ...bar, time: bar.time as never })
          setCount(bars.length)
        }
      })
      cleanup = () => {
        unsub()
        chart.remove()
      }
      const r = await getJson<{ candles: { t: number; o: number; h: number; l: number; c: number }[] }>(apiUrl(`/v1/markets/${encodeURIComponent(marketId)}/candles?interval=${interval}`)).catch(() => ({ candles: [] }))
      if (disposed) return
      bars = r.candles.map((c) => ({ time: c.t, open: c.o, high: c.h, low: c.l, close: c.c }))
      restLoaded = true
      foldAll()
      // For the browser tests: what the chart holds, the price range its axis shows, and the bars in view (logical indexes).
      ;(globalThis as { __twinbookChart?: unknown }).__twinbookChart = () => ({
        marketId, interval, bars: bars.length, range: series.priceScale().getVisibleRange(), logical: chart.timeScale().getVisibleLogicalRange()
      })
    })()
    return () => {
      disposed = true
      cleanup()
    }
  }, [marketId, interval])
  return (
    <div class="card">
      {/* The heading names the chart only; the interval buttons are a group of their own beside it. */}
      <div class="card-head">
        <h2>Price (YES)</h2>
        <div class="seg" role="group" aria-label="Candle interval">
          {INTERVALS.map((iv) => <button class={iv === interval ? "on" : ""} aria-pressed={iv === interval} onClick={() => setIv(iv)} data-testid={`candles-${iv}`}>{iv}</button>)}
        </div>
      </div>
      <div ref={el} class="chart" data-testid="candles" data-bars={count ?? ""} style={count === 0 ? { display: "none" } : undefined} />
      {count === 0 && <p class="muted small empty-chart" data-testid="candles-empty">No trades in this {interval} window yet: candles appear with the first trade.</p>}
    </div>
  )
}

type FeedTradeRow = { readonly id: number; readonly time: number; readonly price: number; readonly yes_price?: number; readonly outcome?: string }

/** The best price to start the ticket at: the best ask for a buy, the best bid for a sell, in the outcome's own terms. */
export const startPrice = (book: Book | null, side: "buy" | "sell", outcome: "yes" | "no"): number | null => {
  const bid = book?.bids[0]?.price
  const ask = book?.asks[0]?.price
  // A NO price is 100¢ − the YES price, and the sides swap: NO's ask is 100¢ − YES's bid.
  const own = outcome === "yes" ? { bid, ask } : { bid: ask === undefined ? undefined : MAX_PRICE_BPS - ask, ask: bid === undefined ? undefined : MAX_PRICE_BPS - bid }
  return (side === "buy" ? (own.ask ?? own.bid) : (own.bid ?? own.ask)) ?? null
}

/** The user's shares of this market that are free to sell (held minus those locked in resting sells); null until read. */
const useFreeShares = (marketId: string): { yes: number; no: number } | null => {
  const [free, setFree] = useState<{ yes: number; no: number } | null>(null)
  const k = key.value
  const v = portfolioVersion.value // re-read on every portfolio frame: fills and cancels move it
  useEffect(() => {
    if (k === null) return
    let live = true
    getJson<{ yes: number; no: number; yes_locked?: number; no_locked?: number }>(apiUrl(`/v1/position/${encodeURIComponent(marketId)}/${k.user}`))
      .then((p) => live && setFree({ yes: p.yes - (p.yes_locked ?? 0), no: p.no - (p.no_locked ?? 0) }))
      .catch(() => {})
    return () => {
      live = false
    }
  }, [marketId, k?.user, v])
  return free
}

// One piece: a component: the ticket's fields, preview and submit around one form state.
export const Ticket = ({ marketId, takerFeeBps }: { marketId: string; takerFeeBps: number }) => {
  const [side, setSide] = useState<"buy" | "sell">("buy")
  const [outcome, setOutcome] = useState<"yes" | "no">("yes")
  // null until a person types a price: until then it follows the book's best price for this side and outcome.
  const [priceText, setPrice] = useState<string | null>(null)
  const [size, setSize] = useState("10")
  const [type, setType] = useState<"gtc" | "post_only" | "ioc" | "fok">("gtc")
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const book = useBook(marketId)
  const free = useFreeShares(marketId)
  const best = startPrice(book, side, outcome)
  const price = priceText ?? (best === null ? "50" : formatCents(best).replace("¢", ""))
  const priceBps = parseCentsToBps(price)
  const sizeN = /^\d+$/.test(size.trim()) ? Number(size.trim()) : NaN
  const preview = priceBps === null ? ({ ok: false, problem: "Enter a price in cents, e.g. 52 or 52.5." } as const) : previewOrder({ side, priceBps, size: sizeN, takerFeeBps })
  const O = outcome.toUpperCase()
  const held = free === null ? null : free[outcome]
  // A sell needs shares: with none (or fewer than the size) free to sell, say so and do not offer the button.
  const cannotSell = side === "sell" && held !== null && (held === 0 || (Number.isSafeInteger(sizeN) && sizeN > held))
  const submit = async () => {
    if (!preview.ok || priceBps === null || cannotSell) return
    const notify = notifyHere()
    setBusy(true)
    setError(null)
    const r = await placeOrder({ market_id: marketId, side, outcome, price: priceBps, size: sizeN, order_type: type })
    setBusy(false)
    if (!r.ok) return setError(r.message)
    const v = r.value
    notify("ok", r.status === 202 ? "Trading is paused: your order is queued and runs when it reopens." : `Order ${v.order_id}: ${v.status ?? ""} — ${v.fills.length} fill(s), ${v.remaining} resting.`)
  }
  if (key.value === null) return <div class="card"><h2>Trade</h2><p><a href="#/account">Sign in</a> to trade.</p></div>
  return (
    <div class="card ticket" data-testid="ticket">
      <h2>Trade</h2>
      <div class="seg wide" role="group" aria-label="Side">
        <button class={side === "buy" ? "on buy" : ""} aria-pressed={side === "buy"} onClick={() => setSide("buy")} data-testid="ticket-buy">Buy</button>
        <button class={side === "sell" ? "on sell" : ""} aria-pressed={side === "sell"} onClick={() => setSide("sell")} data-testid="ticket-sell">Sell</button>
      </div>
      <div class="seg wide" role="group" aria-label="Outcome">
        <button class={outcome === "yes" ? "on" : ""} aria-pressed={outcome === "yes"} onClick={() => setOutcome("yes")} data-testid="ticket-yes">YES</button>
        <button class={outcome === "no" ? "on" : ""} aria-pressed={outcome === "no"} onClick={() => setOutcome("no")} data-testid="ticket-no">NO</button>
      </div>
      <label>Price (¢ per {O} share)<input inputMode="decimal" value={price} onInput={(e) => setPrice((e.target as HTMLInputElement).value)} data-testid="ticket-price" /></label>
      <label>Contracts<input inputMode="numeric" value={size} onInput={(e) => setSize((e.target as HTMLInputElement).value)} data-testid="ticket-size" /></label>
      <label>Order type
        <select value={type} onChange={(e) => setType((e.target as HTMLSelectElement).value as never)} data-testid="ticket-type">
          <option value="gtc">Good till cancelled</option>
          <option value="post_only">Post only (maker)</option>
          <option value="ioc">Immediate or cancel</option>
          <option value="fok">Fill or kill</option>
        </select>
      </label>
      {/* Amounts to the cent: a cost rounds up (the order never costs more), proceeds and profit round down. */}
      <div class="preview" data-testid="ticket-preview">
        {side === "sell" && held !== null && held === 0 ? (
          <span data-testid="ticket-no-shares">You hold no {O} shares to sell here. To bet against {O}, buy {outcome === "yes" ? "NO" : "YES"}.</span>
        ) : preview.ok ? (
          side === "buy" ? (
            <>
              <div><span>Cost (at most)</span><b>{formatUsd(preview.notionalMicro, { round: "up" })}</b></div>
              <div><span>Pays if {O} wins</span><b>{formatUsd(preview.payoutMicro)}</b></div>
              <div><span>Profit if it wins</span><b>{formatUsd(preview.netMicro, { round: "down" })}</b></div>
              {preview.maxFeeMicro > 0 && <div class="muted"><span>incl. taker fee up to</span><span>{formatUsd(preview.maxFeeMicro, { round: "up" })}</span></div>}
            </>
          ) : (
            <>
              <div><span>You receive (at least)</span><b>{formatUsd(preview.netMicro, { round: "down" })}</b></div>
              <div class="muted"><span>{held === null ? `Selling needs ${O} shares you hold` : `You hold ${held} ${O} share${held === 1 ? "" : "s"} free to sell${cannotSell ? ": lower the size" : ""}`}</span></div>
            </>
          )
        ) : (
          <span class="muted">{preview.problem}</span>
        )}
      </div>
      <button class={`btn primary full ${side}`} disabled={!preview.ok || busy || cannotSell} onClick={submit} data-testid="ticket-submit">
        {side === "buy" ? "Buy" : "Sell"} {O}
        {priceBps !== null ? ` at ${formatCents(priceBps)}` : ""}
      </button>
      {error !== null && <p class="error" data-testid="ticket-error">{error}</p>}
    </div>
  )
}

export const OrdersTable = ({ marketId }: { marketId?: string }) => {
  const orders = openOrders.value.filter((o) => marketId === undefined || o.market_id === marketId)
  const [error, setError] = useState<string | null>(null)
  return (
    <div class="card" data-testid="open-orders">
      <div class="card-head">
        <h2>Open orders</h2>
        {orders.length > 0 && (
          <button class="btn small danger" data-testid="cancel-all" onClick={async () => {
            const notify = notifyHere()
            const r = await cancelAll(marketId)
            if (!r.ok) setError(r.message)
            else notify("ok", `Cancelled ${r.value.cancelled} order(s).`)
          }}>Cancel all</button>
        )}
      </div>
      {orders.length === 0 ? <p class="muted">None.</p> : (
        <table>
          <thead><tr><th>Side</th><th>Price</th><th>Left / size</th>{marketId === undefined && <th>Market</th>}<th /></tr></thead>
          <tbody>
            {orders.map((o) => (
              <tr data-testid="open-order" data-id={o.id}>
                <td class={o.side}>{o.side} {o.outcome.toUpperCase()}</td>
                <td>{formatCents(o.price)}</td>
                <td>{o.remaining} / {o.original_size}</td>
                {marketId === undefined && <td><MarketLink marketId={o.market_id} /></td>}
                <td><button class="btn small" data-testid="cancel-order" onClick={async () => {
                  const r = await cancelOrder(o.id)
                  if (!r.ok) setError(r.message)
                }}>Cancel</button></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {error !== null && <p class="error">{error}</p>}
    </div>
  )
}

export const MarketPage = ({ marketId }: { marketId: string }) => {
  const { event, outcome, error } = useMarket(marketId)
  if (error !== null) return <p class="error">{error}</p>
  if (event === null || outcome === null) return <p class="muted">Loading…</p>
  const id = outcome.market_id
  return (
    <section>
      <div class="crumbs"><a href="#/">Markets</a> / {event.category}</div>
      <h1 data-testid="market-title">{event.neg_risk ? `${event.question} — ${outcome.label}` : event.question}</h1>
      {event.neg_risk && (
        <div class="seg outcomes-tabs">
          {event.outcomes.map((o) => <a class={o.market_id === id ? "on" : ""} href={`#/m/${encodeURIComponent(o.market_id)}`}>{o.label}</a>)}
        </div>
      )}
      <p class="muted small">Status {event.status} · ends {formatTime(event.expiry)} · taker fee {event.fee_bps} bps</p>
      {/* On a phone (one column) the ticket comes first, right under the title (styles.css). */}
      <div class="market-layout">
        <div class="col">
          <Candles marketId={id} />
          <div class="two">
            <BookView marketId={id} />
            <TradesView marketId={id} />
          </div>
        </div>
        <div class="col side">
          <Ticket marketId={id} takerFeeBps={event.fee_bps} />
          {key.value !== null && <OrdersTable marketId={id} />}
        </div>
      </div>
    </section>
  )
}
