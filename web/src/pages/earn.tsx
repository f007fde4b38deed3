// Earn → Provide Liquidity: Simple (capital + preset) and Advanced forms, the in-browser bot
// with its status panel and Stop & Withdraw, and the server-managed bot (delegate, start,
// status, stop / revoke) for quoting that continues after the tab closes.
import { useEffect, useState } from "preact/hooks"
import type { ApiResult } from "../../../src/client/index.ts"
import type { Market } from "../../../src/client/types.ts"
import { paramsFromPreset, PRESETS, type PresetName } from "../../../src/lp/presets.ts"
import type { StrategySpec } from "../../../src/lp/strategy-spec.ts"
import { botInfo, botRunning, botStatus, checkLeftover, leftoverQuotes, startBrowserBot, stopBrowserBot } from "../bot/browser-bot.ts"
import { ADVANCED_LABELS, type AdvancedField, advancedForm, type FormResult, simpleForm } from "../bot/form.ts"
import { midExcluding, yesTerms } from "../bot/loop.ts"
import { describeError, type ErrorBody } from "../errors.ts"
import { formatCents, formatTime, formatUsd } from "../format.ts"
import { balance } from "../portfolio-store.ts"
import { apiUrl, client, getJson, key, noteLpOpen, noteSurface, notifyHere } from "../session.ts"

const PRESET_TEXT: Readonly<Record<PresetName, string>> = {
  conservative: "Wide quotes (4¢), 2 levels, 30% of capital deployed; stops at −5%.",
  balanced: "2¢ spread, 3 levels, half the capital deployed; stops at −10%.",
  aggressive: "Tight 1¢ spread, 5 levels, 80% deployed; stops at −20%."
}

const useMarkets = (): ReadonlyArray<{ id: string; label: string }> => {
  const [list, setList] = useState<ReadonlyArray<{ id: string; label: string }>>([])
  useEffect(() => {
    void getJson<{ markets: Market[] }>(apiUrl("/v1/markets?status=active&limit=200"))
      .then((r) => setList(r.markets.flatMap((m) => m.outcomes.map((o) => ({ id: o.market_id, label: m.neg_risk ? `${m.question} — ${o.label}` : m.question })))))
      .catch(() => {})
  }, [])
  return list
}

/** An input with its error under it, linked by aria-describedby so a screen reader reads it with the field. */
const Field = ({ name, label, value, set, onBlur, error, testid }: { name: string; label: string; value: string; set: (v: string) => void; onBlur: () => void; error?: string | undefined; testid: string }) => (
  <label class={error !== undefined ? "invalid" : ""}>
    {label}
    <input value={value} onInput={(e) => set((e.target as HTMLInputElement).value)} onBlur={onBlur} data-testid={testid} aria-invalid={error !== undefined} aria-describedby={error !== undefined ? `error-${name}` : undefined} />
    {error !== undefined && <span class="field-error" id={`error-${name}`} data-testid={`error-${name}`}>{label.replace(/ \(.*/, "")}: {error}</span>}
  </label>
)

/** The Simple capital before a person types one: $100, or the whole available balance when that is less. */
export const defaultCapital = (availableMicro: number | null): string => {
  const micro = Math.min(100_000_000, availableMicro ?? 100_000_000)
  const cents = Math.floor(micro / 10_000)
  return cents % 100 === 0 ? String(cents / 100) : (cents / 100).toFixed(2)
}

const BotPanel = () => {
  const s = botStatus.value
  const info = botInfo.value
  const [rewards, setRewards] = useState<number | null>(null)
  const [rebates, setRebates] = useState<number>(0)
  const [now, setNow] = useState(Date.now())
  const [stopping, setStopping] = useState(false)
  useEffect(() => {
    const h = setInterval(() => setNow(Date.now()), 1000)
    return () => clearInterval(h)
  }, [])
  useEffect(() => {
    const k = key.value
    if (k === null || info === null) return
    const load = () => {
      void getJson<{ today: { estimate_micro_usdc: number } }>(apiUrl(`/v1/rewards/me?user=${k.user}`)).then((r) => setRewards(r.today.estimate_micro_usdc)).catch(() => {})
      void getJson<{ trades: { maker: string; time: number; maker_rebate?: number; market_id: string }[] }>(apiUrl(`/v1/trades/all/${k.user}?limit=200`))
        .then((r) => setRebates(r.trades.filter((t) => t.maker === k.user && t.time * 1000 >= info.startedAtMs - 1000).reduce((n, t) => n + (t.maker_rebate ?? 0), 0)))
        .catch(() => {})
    }
    load()
    const h = setInterval(load, 15_000)
    return () => clearInterval(h)
    // Re-read after every re-quote too: fills land between them.
  }, [info?.startedAtMs, s?.requotesAtMs.length, s?.netYes])
  if (s === null || info === null) return null
  const last = s.requotesAtMs[s.requotesAtMs.length - 1]
  const running = s.state !== "stopped" && s.state !== "stopped_limit"
  return (
    <div class="card" data-testid="bot-panel" data-state={s.state}>
      <h2>
        In-browser bot: <span class={`pill ${s.state}`} data-testid="bot-state">{s.state.replace("_", " ")}</span>
      </h2>
      {s.reason !== null && <p class="reason" data-testid="bot-reason">{s.reason}</p>}
      <div class="stats">
        <div class="stat"><span>Mid (others' quotes)</span><b>{s.midBps === null ? "—" : formatCents(s.midBps)}</b></div>
        <div class="stat"><span>Inventory (net YES)</span><b data-testid="bot-inventory">{s.netYes}</b></div>
        <div class="stat"><span>PnL since start</span><b class={s.pnlMicro >= 0 ? "up" : "down"}>{formatUsd(s.pnlMicro, { sign: true })}</b></div>
        <div class="stat"><span>Maker rebates</span><b>{formatUsd(rebates)}</b></div>
        <div class="stat"><span>Today's LP rewards (est.)</span><b data-testid="bot-rewards">{rewards === null ? "…" : formatUsd(rewards)}</b></div>
        <div class="stat"><span>Re-quotes</span><b>{s.requotesAtMs.length}{last !== undefined ? ` · last ${Math.round((now - last) / 1000)}s ago` : ""}</b></div>
      </div>
      <table data-testid="bot-quotes">
        <thead><tr><th>Order</th><th>Price</th><th>Size</th><th>In YES terms</th></tr></thead>
        <tbody>
          {s.quotes.length === 0 ? <tr><td colSpan={4} class="muted">no resting quotes</td></tr> : s.quotes.map((q) => (
            <tr data-testid="bot-quote" data-side={q.side} data-outcome={q.outcome}><td class={q.side}>{q.side} {q.outcome.toUpperCase()}</td><td>{formatCents(q.priceBps)}</td><td>{q.size}</td><td class="muted">{yesTerms({ ...q, price: q.priceBps }).bookSide} {formatCents(yesTerms({ ...q, price: q.priceBps }).priceBps)}</td></tr>
          ))}
        </tbody>
      </table>
      <p class="muted small">
        {running && s.nextTickAtMs !== null ? `Next check in ${Math.max(0, Math.round((s.nextTickAtMs - now) / 1000))}s. ` : ""}
        {s.lateByMs > 2000 ? `The last check ran ${Math.round(s.lateByMs / 1000)}s late (the tab was in the background or asleep); it re-quoted once on the current book. ` : ""}
        {s.rejected > 0 ? `${s.rejected} quote(s) refused by the exchange (e.g. would cross). ` : ""}
        {s.lastError !== null ? `Last error: ${s.lastError}` : ""}
      </p>
      <p class="muted small">The bot runs in this tab: keep it open. Closing the tab stops it and cancels its quotes (best effort); for quoting while you are away, use the server-managed bot below.</p>
      {running || s.quotes.length > 0 ? (
        <button class="btn danger" disabled={stopping} data-testid="bot-stop" onClick={async () => {
          const notify = notifyHere()
          setStopping(true)
          await stopBrowserBot()
          setStopping(false)
          notify("ok", "Bot stopped: all quotes cancelled; your capital is back in your available balance.")
        }}>{stopping ? "Stopping…" : "Stop & Withdraw"}</button>
      ) : null}
    </div>
  )
}

interface LpStatus {
  status: "none" | "running" | "stopped"
  session_pub: string | null
  stop_reason: string | null
  open_orders: number
  markets: { market_id: string; state: string; net_yes: number; pnl_micro_usdc: number; open_orders: number }[]
  sessions: { session_pub: string; delegated: boolean; revoked: boolean; expired: boolean; expires_at_unix: number }[]
}

// One piece: a component: the server bot's delegate, start and stop around one status.
const ServerBot = ({ marketId, build }: { marketId: string; build: () => FormResult }) => {
  const k = key.value!
  const [status, setStatus] = useState<LpStatus | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const load = async () => {
    const res = await fetch(apiUrl(`/v1/lp-bot/status?user=${k.user}`), { cache: "no-store" }).catch(() => null)
    if (res === null) return
    const body = (await res.json()) as unknown
    noteSurface(res.status, body)
    if (res.ok) {
      noteLpOpen()
      setStatus(body as LpStatus)
    }
  }
  useEffect(() => {
    void load()
    const h = setInterval(load, 3000)
    return () => clearInterval(h)
  }, [k.user])
  const call = async <T,>(p: Promise<ApiResult<T>>): Promise<T> => {
    const res = await p
    noteSurface(res.status, res.body)
    if (res.status !== 200) throw new Error(describeError(res.status, res.body as ErrorBody))
    noteLpOpen()
    return res.body
  }
  const act = async (f: () => Promise<string>) => {
    const notify = notifyHere()
    setBusy(true)
    setError(null)
    try {
      notify("ok", await f())
      await load()
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e))
    } finally {
      setBusy(false)
    }
  }
  const live = status?.sessions.find((s) => s.delegated && !s.revoked && !s.expired) ?? null
  const delegate = () => act(async () => {
    const c = client.value!
    const offer = await call(c.lpSessionNew(7 * 86_400))
    // The user key signs the server's message_bytes_hex (the client checks it is this user's orders-only session first).
    await call(c.lpDelegate(offer))
    return "Session key delegated for 7 days (orders only; it can never withdraw)."
  })
  const start = () => act(async () => {
    if (live === null) throw new Error("Delegate a session key first.")
    const r = build()
    if (!r.ok) throw new Error("Fix the highlighted fields first.")
    await call(client.value!.lpStart(live.session_pub, [marketId], r.spec))
    return "Server-managed bot started: it keeps quoting after you close this tab."
  })
  const stop = (revoke: boolean) => act(async () => {
    const r = await call(client.value!.lpStop(revoke))
    return `Server bot stopped: ${r.cancelled_orders} order(s) cancelled${revoke ? ", session keys revoked" : ""}.`
  })
  return (
    <div class="card" data-testid="server-bot" data-status={status?.status ?? "unknown"}>
      <h2>Server-managed bot <span class={`pill ${status?.status ?? ""}`} data-testid="server-bot-status">{status?.status ?? "…"}</span></h2>
      <p class="small">Keeps quoting after you close the tab: you delegate a session key that can only place orders (never withdraw), then the service runs the same strategy for you.</p>
      <div class="kv small">
        <span>Session key</span><span data-testid="server-bot-session">{live === null ? "none delegated" : `${live.session_pub.slice(0, 10)}… until ${formatTime(live.expires_at_unix)}`}</span>
        {status !== null && status.status !== "none" && <><span>Markets</span><span>{status.markets.map((m) => `${m.state} (net ${m.net_yes}, PnL ${formatUsd(m.pnl_micro_usdc, { sign: true })}, ${m.open_orders} orders)`).join("; ")}</span></>}
        {status?.stop_reason && <><span>Stopped</span><span>{status.stop_reason}</span></>}
      </div>
      <div class="row">
        <button class="btn" disabled={busy} onClick={delegate} data-testid="server-delegate">Delegate session key</button>
        <button class="btn primary" disabled={busy || live === null} onClick={start} data-testid="server-start">Start on server</button>
        <button class="btn" disabled={busy || status?.status !== "running"} onClick={() => stop(false)} data-testid="server-stop">Stop</button>
        {/* Nothing to stop or revoke until a session key is delegated (or the server bot runs). */}
        <button class="btn danger" disabled={busy || (live === null && status?.status !== "running")} onClick={() => stop(true)} data-testid="server-revoke">Stop & revoke keys</button>
      </div>
      {error !== null && <p class="error" data-testid="server-bot-error">{error}</p>}
    </div>
  )
}

// One piece: a page component: its hooks, then its markup top to bottom.
export const EarnPage = () => {
  const k = key.value
  const markets = useMarkets()
  const [marketId, setMarketId] = useState<string>("")
  const [mode, setMode] = useState<"simple" | "advanced">("simple")
  // null until a person types one: then the default follows the balance (never more than it).
  const [capitalText, setCapital] = useState<string | null>(null)
  const [preset, setPreset] = useState<PresetName>("balanced")
  const [adv, setAdv] = useState<Record<Exclude<AdvancedField, "capital">, string>>({ spread: "2", levels: "3", contracts: "10", interval: "15", skew: "80", stopLoss: "10", takeProfit: "20" })
  // Errors show for a field once it is typed in or left, and for every field once Start is pressed; they follow the text (a fix clears them at once).
  const [touched, setTouched] = useState<ReadonlySet<string>>(new Set())
  const [attempted, setAttempted] = useState(false)
  const [startError, setStartError] = useState<string | null>(null)
  const left = leftoverQuotes.value
  const running = botRunning.value
  const available = balance.value?.available ?? null
  useEffect(() => {
    void checkLeftover()
  }, [k?.user])
  // Default: the market the bot last ran on, else the first listed.
  const chosen = marketId !== "" ? marketId : (botInfo.value?.marketId ?? markets[0]?.id ?? "")

  if (k === null) return <section class="narrow"><h1>Provide liquidity</h1><p><a href="#/account">Sign in</a> and deposit first.</p></section>

  const capital = capitalText ?? defaultCapital(available)
  const build = (): FormResult => (mode === "simple" ? simpleForm(capital, preset) : advancedForm({ ...adv, capital }))
  const result = build()
  const allErrors: Partial<Record<string, string>> = result.ok ? {} : result.errors
  const errors = Object.fromEntries(Object.entries(allErrors).filter(([f]) => attempted || touched.has(f)))
  const touch = (f: string) => () => {
    if (!touched.has(f)) setTouched(new Set([...touched, f]))
  }

  const start = async () => {
    setStartError(null)
    setAttempted(true)
    const r = build()
    if (!r.ok) return
    const avail = balance.value?.available ?? 0
    if (r.spec.capital_micro_usdc > avail) return setStartError(`Capital ${formatUsd(r.spec.capital_micro_usdc)} is more than your available ${formatUsd(avail)}. Deposit first or lower it.`)
    let params = r.params
    if (r.spec.mode === "simple") {
      // Size the ladder at the current mid (the preset's minimum non-dust size depends on it).
      const book = await getJson<{ bids: { price: number; size: number }[]; asks: { price: number; size: number }[] }>(apiUrl(`/v1/markets/${encodeURIComponent(chosen)}/book`)).catch(() => null)
      const mid = book === null ? null : midExcluding(book, [])
      params = paramsFromPreset(r.spec.preset, r.spec.capital_micro_usdc, mid ?? undefined)
    }
    startBrowserBot(chosen, params, r.spec satisfies StrategySpec)
  }

  return (
    <section>
      <h1>Earn · Provide liquidity</h1>
      <p class="lead">Quote both sides of a market and earn the spread, maker rebates and a share of the daily LP rewards pool. The bot quotes around the mid of other traders' quotes, widens when the price moves, leans away from the inventory it builds, re-quotes about every 15 s, and pauses when its inventory gets too one-sided.</p>
      {left !== null && !running && (
        <div class="callout" data-testid="bot-leftover">
          An in-browser bot was running when this tab last closed; {left.length} of its quotes still rest.{" "}
          <button class="btn small" onClick={async () => { const notify = notifyHere(); await stopBrowserBot(); notify("ok", "Left-over quotes cancelled.") }} data-testid="bot-leftover-cancel">Cancel them</button>
        </div>
      )}
      <div class="two">
        <div class="card" data-testid="lp-form">
          <label>Market
            <select value={chosen} onChange={(e) => setMarketId((e.target as HTMLSelectElement).value)} data-testid="lp-market" disabled={running}>
              {markets.map((m) => <option value={m.id}>{m.label}</option>)}
            </select>
          </label>
          <div class="seg wide" role="group" aria-label="Form">
            <button class={mode === "simple" ? "on" : ""} aria-pressed={mode === "simple"} onClick={() => setMode("simple")} data-testid="lp-simple">Simple</button>
            <button class={mode === "advanced" ? "on" : ""} aria-pressed={mode === "advanced"} onClick={() => setMode("advanced")} data-testid="lp-advanced">Advanced</button>
          </div>
          <Field name="capital" label={ADVANCED_LABELS.capital} value={capital} set={(v) => { setCapital(v); touch("capital")() }} onBlur={touch("capital")} error={errors.capital} testid="lp-capital" />
          {mode === "simple" ? (
            <fieldset class="presets">
              <legend class="small">Risk preset</legend>
              {(Object.keys(PRESETS) as PresetName[]).map((p) => (
                <label class={`preset ${preset === p ? "on" : ""}`}>
                  <input type="radio" name="preset" checked={preset === p} onChange={() => setPreset(p)} data-testid={`preset-${p}`} />
                  <b>{p[0]!.toUpperCase() + p.slice(1)}</b>
                  <span class="small">{PRESET_TEXT[p]}</span>
                </label>
              ))}
            </fieldset>
          ) : (
            <div class="adv-grid">
              {(Object.keys(adv) as Exclude<AdvancedField, "capital">[]).map((f) => (
                <Field name={f} label={ADVANCED_LABELS[f]} value={adv[f]} set={(v) => { setAdv({ ...adv, [f]: v }); touch(f)() }} onBlur={touch(f)} error={errors[f]} testid={`adv-${f}`} />
              ))}
            </div>
          )}
          <button class="btn primary full" disabled={running || chosen === ""} onClick={start} data-testid="bot-start">
            {running ? "Bot running" : "Start in this browser"}
          </button>
          {startError !== null && <p class="error" data-testid="bot-start-error">{startError}</p>}
          <p class="muted small">Available balance: {balance.value === null ? "…" : formatUsd(balance.value.available)}. Capital stays in your balance: the bot's quotes lock part of it, and Stop & Withdraw releases it.</p>
        </div>
        <div class="col">
          <BotPanel />
          {chosen !== "" && <ServerBot marketId={chosen} build={build} />}
        </div>
      </div>
    </section>
  )
}
