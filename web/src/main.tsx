// The app shell: loads /config.json, restores the key, and routes on the URL hash.
import { render } from "preact"
import { useEffect } from "preact/hooks"
import { signal } from "@preact/signals"
import { config, key, loadConfig, pageChanged, registered, register, restoreKey, surfaces, toast, wsState } from "./session.ts"
import { startFeed } from "./feed.ts"
import { formatUsd, shortKey } from "./format.ts"
import { balance, startPortfolio } from "./portfolio-store.ts"
import { AccountPage } from "./pages/account.tsx"
import { DepositPage } from "./pages/deposit.tsx"
import { EarnPage } from "./pages/earn.tsx"
import { MarketPage } from "./pages/market.tsx"
import { MarketsPage } from "./pages/markets.tsx"
import { PortfolioPage } from "./pages/portfolio.tsx"
import "./styles.css"

const route = signal(location.hash.replace(/^#/, "") || "/")
addEventListener("hashchange", () => {
  route.value = location.hash.replace(/^#/, "") || "/"
  // A toast belongs to the page it was raised on: left up, it would cover the next page (e.g. its Open orders).
  pageChanged()
  scrollTo(0, 0)
})

const NAV: ReadonlyArray<readonly [string, string]> = [
  ["/", "Markets"],
  ["/portfolio", "Portfolio"],
  ["/earn", "Earn"],
  ["/deposit", "Deposit"],
  ["/account", "Account"]
]

const Banners = () => {
  const s = surfaces.value
  return (
    <div class="banners">
      {s.trading === "closed" && <div class="banner warn" data-testid="banner-trading">Trading is closed by the operator. Orders are refused until it reopens; the LP bot waits and resumes by itself.</div>}
      {s.trading === "paused" && <div class="banner warn" data-testid="banner-trading">Trading is paused. New orders queue and run when it reopens; withdrawals wait.</div>}
      {s.lp === "closed" && <div class="banner warn" data-testid="banner-lp">Liquidity provision (server-managed bot) is paused by the operator; it resumes by itself.</div>}
      {wsState.value === "down" && <div class="banner error" data-testid="banner-ws">Live updates lost — reconnecting… (prices shown may be stale)</div>}
    </div>
  )
}

const Toast = () => {
  const t = toast.value
  useEffect(() => {
    if (t === null) return
    const h = setTimeout(() => (toast.value = null), 6000)
    return () => clearTimeout(h)
  }, [t])
  if (t === null) return null
  return (
    <div class={`toast ${t.kind}`} role="status" data-testid="toast" onClick={() => (toast.value = null)}>
      {t.text}
    </div>
  )
}

const Header = () => {
  const r = route.value
  const k = key.value
  const b = balance.value
  return (
    <header class="top">
      <a class="brand" href="#/">twinbook</a>
      <nav>
        {NAV.map(([path, label]) => (
          <a href={`#${path}`} class={(path === "/" ? r === "/" || r.startsWith("/m/") : r.startsWith(path)) ? "active" : ""} data-testid={`nav-${label.toLowerCase()}`}>
            {label}
          </a>
        ))}
      </nav>
      <div class="who">
        <span class={`dot ${wsState.value}`} title={`live updates: ${wsState.value}`} data-testid="ws-state" data-state={wsState.value} />
        {k === null ? (
          <a class="btn small" href="#/account">Sign in</a>
        ) : (
          <a href="#/portfolio" class="chip" data-testid="header-balance">
            {b === null ? "…" : formatUsd(b.available)} <span class="muted">{shortKey(k.user)}</span>
          </a>
        )}
      </div>
    </header>
  )
}

const Page = () => {
  const r = route.value
  if (config.value === null) return <p class="muted">Loading…</p>
  if (r.startsWith("/m/")) return <MarketPage marketId={decodeURIComponent(r.slice(3))} />
  if (r.startsWith("/portfolio")) return <PortfolioPage />
  if (r.startsWith("/earn")) return <EarnPage />
  if (r.startsWith("/deposit")) return <DepositPage />
  if (r.startsWith("/account")) return <AccountPage />
  return <MarketsPage />
}

const App = () => (
  <>
    <Header />
    <Banners />
    <main>
      <Page />
    </main>
    <Toast />
  </>
)

const boot = async (): Promise<void> => {
  config.value = await loadConfig()
  restoreKey()
  startFeed()
  startPortfolio()
  if (key.value !== null && !registered.value) await register()
}

render(<App />, document.getElementById("app")!)
void boot()
