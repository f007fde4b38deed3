// One market: live book, recent trades and candles (REST first, then the WebSocket), the order
// ticket, and the user's open orders here with cancel and cancel-all.
import { useEffect, useRef, useState } from "preact/hooks"
import type { Market, OutcomeMarket } from "../../../src/client/types.ts"
import { MAX_PRICE_BPS } from "../../../src/engine/money.ts"
import { subscribe } from "../feed.ts"
import { formatCents, formatTime, formatUsd, parseCentsToBps, previewOrder } from "../format.ts"
import { openOrders } from "../portfolio-store.ts"
import { apiUrl, getJson, key, notify } from "../session.ts"
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
        const id = marketId.toLowerCase().replace(/^0x/, "")
        const outcome = ev.outcomes.find((o) => o.market_id.toLowerCase().replace(/^0x/, "") === id || o.slug === marketId) ?? ev.outcomes[0] ?? null
        setState({ event: ev, outcome, error: null })
      })
      .catch((e: Error) => setState({ event: null, outcome: null, error: e.message }))
  }, [marketId])
  return state
}

const BookView = ({ marketId }: { marketId: string }) => {
  const [book, setBook] = useState<Book | null>(null)
  useEffect(() => {
    setBook(null)
    // The feed seeds the book from REST after subscribing, then applies every pushed snapshot.
    return subscribe(`book:${marketId}`, (e) => {
      if (e.type === "book" && e.marketId === marketId) setBook(e.book)
    })
  }, [marketId])
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

const Candles = ({ marketId }: { marketId: string }) => {
  const el = useRef<HTMLDivElement>(null)
  const [interval, setIv] = useState<(typeof INTERVALS)[number]>("1m")
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
        layout: { background: { color: "transparent" }, textColor: "#475569", attributionLogo: false },
        grid: { vertLines: { color: "#eef2f7" }, horzLines: { color: "#eef2f7" } },
        timeScale: { timeVisible: true, secondsVisible: false },
        // The chart formats times with navigator.language, which Intl may refuse (Chromium under LANG=C says "en-US@posix").
        localization: { locale: chartLocale() },
        rightPriceScale: { scaleMargins: { top: 0.1, bottom: 0.1 } },
        autoSize: true
      })
      const series = chart.addSeries(lc.CandlestickSeries, { priceFormat: { type: "custom", formatter: (p: number) => `${(p * 100).toFixed(1)}¢`, minMove: 0.0001 } })
      const load = async () => {
        const r = await getJson<{ candles: { t: number; o: number; h: number; l: number; c: number }[] }>(apiUrl(`/v1/markets/${encodeURIComponent(marketId)}/candles?interval=${interval}`))
        if (disposed) return
        series.setData(r.candles.map((c) => ({ time: c.t as never, open: c.o, high: c.h, low: c.l, close: c.c })))
        setCount(r.candles.length)
      }
      await load().catch(() => {})
      // New trades move the last candle: re-read on each trade frame (the candles route is edge-cached for 5 s at 1m).
      const unsub = subscribe(`trades:${marketId}`, (e) => {
        if (e.type === "trade" && e.marketId === marketId) void load().catch(() => {})
      })
      cleanup = () => {
        unsub()
        chart.remove()
      }
    })()
    return () => {
      disposed = true
      cleanup()
    }
  }, [marketId, interval])
  return (
    <div class="card">
      <h2>
        Price (YES)
        <span class="seg">
          {INTERVALS.map((iv) => <button class={iv === interval ? "on" : ""} onClick={() => setIv(iv)} data-testid={`candles-${iv}`}>{iv}</button>)}
        </span>
      </h2>
      <div ref={el} class="chart" data-testid="candles" style={count === 0 ? { display: "none" } : undefined} />
      {count === 0 && <p class="muted small empty-chart">No trades in this {interval} window yet: candles appear with the first trade.</p>}
    </div>
  )
}

export const Ticket = ({ marketId, takerFeeBps }: { marketId: string; takerFeeBps: number }) => {
  const [side, setSide] = useState<"buy" | "sell">("buy")
  const [outcome, setOutcome] = useState<"yes" | "no">("yes")
  const [price, setPrice] = useState("50")
  const [size, setSize] = useState("10")
  const [type, setType] = useState<"gtc" | "post_only" | "ioc" | "fok">("gtc")
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const priceBps = parseCentsToBps(price)
  const sizeN = /^\d+$/.test(size.trim()) ? Number(size.trim()) : NaN
  const preview = priceBps === null ? ({ ok: false, problem: "Enter a price in cents, e.g. 52 or 52.5." } as const) : previewOrder({ side, priceBps, size: sizeN, takerFeeBps })
  const submit = async () => {
    if (!preview.ok || priceBps === null) return
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
      <div class="seg wide">
        <button class={side === "buy" ? "on buy" : ""} onClick={() => setSide("buy")} data-testid="ticket-buy">Buy</button>
        <button class={side === "sell" ? "on sell" : ""} onClick={() => setSide("sell")} data-testid="ticket-sell">Sell</button>
      </div>
      <div class="seg wide">
        <button class={outcome === "yes" ? "on" : ""} onClick={() => setOutcome("yes")} data-testid="ticket-yes">YES</button>
        <button class={outcome === "no" ? "on" : ""} onClick={() => setOutcome("no")} data-testid="ticket-no">NO</button>
      </div>
      <label>Price (¢ per {outcome.toUpperCase()} share)<input inputMode="decimal" value={price} onInput={(e) => setPrice((e.target as HTMLInputElement).value)} data-testid="ticket-price" /></label>
      <label>Contracts<input inputMode="numeric" value={size} onInput={(e) => setSize((e.target as HTMLInputElement).value)} data-testid="ticket-size" /></label>
      <label>Order type
        <select value={type} onChange={(e) => setType((e.target as HTMLSelectElement).value as never)} data-testid="ticket-type">
          <option value="gtc">Good till cancelled</option>
          <option value="post_only">Post only (maker)</option>
          <option value="ioc">Immediate or cancel</option>
          <option value="fok">Fill or kill</option>
        </select>
      </label>
      <div class="preview" data-testid="ticket-preview">
        {preview.ok ? (
          side === "buy" ? (
            <>
              <div><span>Cost (at most)</span><b>{formatUsd(preview.notionalMicro, { exact: true })}</b></div>
              <div><span>Pays if {outcome.toUpperCase()} wins</span><b>{formatUsd(preview.payoutMicro)}</b></div>
              <div><span>Profit if it wins</span><b>{formatUsd(preview.netMicro, { exact: true })}</b></div>
              {preview.maxFeeMicro > 0 && <div class="muted"><span>incl. taker fee up to</span><span>{formatUsd(preview.maxFeeMicro, { exact: true })}</span></div>}
            </>
          ) : (
            <>
              <div><span>You receive</span><b>{formatUsd(preview.netMicro, { exact: true })}</b></div>
              <div class="muted"><span>Selling needs {outcome.toUpperCase()} shares you hold</span></div>
            </>
          )
        ) : (
          <span class="muted">{preview.problem}</span>
        )}
      </div>
      <button class={`btn primary full ${side}`} disabled={!preview.ok || busy} onClick={submit} data-testid="ticket-submit">
        {side === "buy" ? "Buy" : "Sell"} {outcome.toUpperCase()}
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
      <h2>
        Open orders
        {orders.length > 0 && (
          <button class="btn small danger" data-testid="cancel-all" onClick={async () => {
            const r = await cancelAll(marketId)
            if (!r.ok) setError(r.message)
            else notify("ok", `Cancelled ${r.value.cancelled} order(s).`)
          }}>Cancel all</button>
        )}
      </h2>
      {orders.length === 0 ? <p class="muted">None.</p> : (
        <table>
          <thead><tr><th>Side</th><th>Price</th><th>Left / size</th>{marketId === undefined && <th>Market</th>}<th /></tr></thead>
          <tbody>
            {orders.map((o) => (
              <tr data-testid="open-order" data-id={o.id}>
                <td class={o.side}>{o.side} {o.outcome.toUpperCase()}</td>
                <td>{formatCents(o.price)}</td>
                <td>{o.remaining} / {o.original_size}</td>
                {marketId === undefined && <td><a href={`#/m/${encodeURIComponent(o.market_id)}`}>{o.market_id.slice(0, 10)}…</a></td>}
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
