// Portfolio: balance (available / locked), positions with average price, mark and PnL, open
// orders, and trade / deposit / withdrawal history — live from the `user:` channel.
import { useEffect, useState } from "preact/hooks"
import { formatCents, formatProb, formatTime, formatUsd } from "../format.ts"
import { MarketLink } from "../market-names.tsx"
import { balance, portfolioVersion, positions } from "../portfolio-store.ts"
import { apiUrl, getJson, key } from "../session.ts"
import { OrdersTable } from "./market.tsx"

interface History {
  trades: { id: number; market_id: string; price: number; yes_price?: number; size: number; side: string; outcome?: string; time: number; maker: string; taker: string; fee: number; maker_rebate?: number }[]
  deposits: { tx_signature: string; amount_micro: number; status: string; seen_at: number; credited_at: number | null }[]
  withdrawals: { id?: string; amount_micro: number; status: string; tx_signature: string | null; created_at: number; confirmed_at: number | null }[]
}

export const useHistory = (): History | null => {
  const [h, setH] = useState<History | null>(null)
  const v = portfolioVersion.value
  const k = key.value
  useEffect(() => {
    if (k === null) return
    let live = true
    void Promise.all([
      getJson<{ trades: History["trades"] }>(apiUrl(`/v1/trades/all/${k.user}?limit=50`)),
      getJson<{ deposits: History["deposits"] }>(apiUrl(`/v1/deposits/all/${k.user}?limit=20`)),
      getJson<{ withdrawals: History["withdrawals"] }>(apiUrl(`/v1/withdrawals/all/${k.user}?limit=20`))
    ])
      .then(([t, d, w]) => live && setH({ trades: t.trades, deposits: d.deposits, withdrawals: w.withdrawals }))
      .catch(() => {})
    return () => {
      live = false
    }
  }, [v, k?.user])
  return h
}

export const PortfolioPage = () => {
  const k = key.value
  const b = balance.value
  const h = useHistory()
  if (k === null) return <section class="narrow"><h1>Portfolio</h1><p><a href="#/account">Sign in</a> to see your portfolio.</p></section>
  return (
    <section>
      <h1>Portfolio</h1>
      <div class="stats" data-testid="balance">
        <div class="stat"><span>Available</span><b data-testid="balance-available" data-micro={b?.available ?? ""}>{b === null ? "…" : formatUsd(b.available)}</b></div>
        <div class="stat"><span>Locked in orders</span><b data-testid="balance-locked" data-micro={b?.locked ?? ""}>{b === null ? "…" : formatUsd(b.locked)}</b></div>
        <div class="stat"><span>Total</span><b>{b === null ? "…" : formatUsd(b.total)}</b></div>
      </div>
      <div class="card">
        <h2>Positions</h2>
        {positions.value.length === 0 ? <p class="muted">No positions.</p> : (
          <table data-testid="positions">
            <thead><tr><th>Market</th><th>Side</th><th>Shares</th><th>Avg price</th><th>Mark</th><th>PnL</th></tr></thead>
            <tbody>
              {positions.value.map((p) => (
                <tr>
                  <td><MarketLink marketId={p.market_id} fallback={p.question ?? p.slug} /></td>
                  <td>{p.outcome}</td><td>{p.size}</td><td>{formatProb(p.avg_price)}</td><td>{formatProb(p.mark_price)}</td>
                  <td class={p.cash_pnl >= 0 ? "up" : "down"}>{formatUsd(p.cash_pnl, { sign: true })}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
      <OrdersTable />
      <div class="card">
        <h2>Trade history</h2>
        {h === null || h.trades.length === 0 ? <p class="muted">No trades.</p> : (
          <table data-testid="trade-history">
            <thead><tr><th>Time (UTC)</th><th>Market</th><th>You were</th><th>Taker's order</th><th>YES price</th><th>Size</th></tr></thead>
            <tbody>
              {h.trades.map((t) => (
                <tr><td>{formatTime(t.time)}</td><td><MarketLink marketId={t.market_id} /></td><td>{t.maker === k.user ? "maker" : "taker"}</td><td>{t.side} {t.outcome ?? ""} at {formatCents(t.price)}</td><td>{formatCents(t.yes_price ?? t.price)}</td><td>{t.size}</td></tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
      <div class="two">
        <div class="card">
          <h2>Deposits</h2>
          {h === null || h.deposits.length === 0 ? <p class="muted">None yet. <a class="inline-link" href="#/deposit">Deposit</a></p> : (
            <table data-testid="deposits">
              <thead><tr><th>Seen</th><th>Amount</th><th>Status</th></tr></thead>
              <tbody>{h.deposits.map((d) => <tr><td>{formatTime(d.seen_at)}</td><td>{formatUsd(d.amount_micro)}</td><td>{d.status}</td></tr>)}</tbody>
            </table>
          )}
        </div>
        <div class="card">
          <h2>Withdrawals</h2>
          {h === null || h.withdrawals.length === 0 ? <p class="muted">None.</p> : (
            <table data-testid="withdrawals">
              <thead><tr><th>Created</th><th>Amount</th><th>Status</th></tr></thead>
              <tbody>{h.withdrawals.map((w) => <tr><td>{formatTime(w.created_at)}</td><td>{formatUsd(w.amount_micro)}</td><td data-testid="withdrawal-status">{w.status}</td></tr>)}</tbody>
            </table>
          )}
        </div>
      </div>
    </section>
  )
}
