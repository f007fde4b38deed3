// The page's one in-browser LP bot: BrowserBot (loop.ts) wired to the API client, timers that
// survive background-tab throttling, and the tab's life cycle.
//
// Background tabs: Chrome throttles page timers to once a second when hidden and, after 5 min,
// to once a minute; a sleeping laptop stops them. The bot's timer runs in a dedicated Worker
// (worker timers are not subject to the page's intensive throttling), and on wake (visible,
// focus, online, pageshow) the bot ticks at once: one re-quote on the current book, no burst.
// Closing the tab stops the bot: its quotes are cancelled with keepalive requests (best effort);
// the ids are also kept in localStorage, so a later visit can cancel any that survived.
import { signal } from "@preact/signals"
import type { StrategyParams } from "../../../src/lp/strategy.ts"
import { apiUrl, client, getJson, key } from "../session.ts"
import { placeQuote } from "../trade.ts"
import { BrowserBot, type BotApi, type BotStatus, type Timers } from "./loop.ts"

const STORE = "twinbook.browserbot.v1"

export interface StoredBot {
  readonly user: string
  readonly marketId: string
  readonly spec: unknown
  readonly orderIds: ReadonlyArray<number>
  readonly startedAtMs: number
}

export const botStatus = signal<BotStatus | null>(null)
export const botInfo = signal<{ marketId: string; spec: unknown; startedAtMs: number } | null>(null)
/**
 * Whether a bot is running in this tab, as a signal: the Earn form locks and unlocks on it. (A
 * plain read of `bot` re-rendered nothing when Stop & Withdraw finished, so the form stayed
 * "Bot running" until something else redrew it.) It turns false when Stop & Withdraw has
 * cancelled every quote, and when the bot stops itself at its stop-loss or take-profit.
 */
export const botRunning = signal(false)
let bot: BrowserBot | null = null

/** setTimeout in a Worker when the browser allows one, else the page's own. */
const makeTimers = (): Timers => {
  const pending = new Map<number, () => void>()
  let seq = 0
  let worker: Worker | null = null
  try {
    const src = "onmessage=(e)=>{const d=e.data;setTimeout(()=>postMessage(d.id),d.ms)}"
    worker = new Worker(URL.createObjectURL(new Blob([src], { type: "text/javascript" })))
    worker.onmessage = (e: MessageEvent<number>) => {
      const fn = pending.get(e.data)
      pending.delete(e.data)
      fn?.()
    }
  } catch {
    worker = null
  }
  return {
    nowMs: () => Date.now(),
    set: (fn, ms) => {
      if (worker === null) return setTimeout(fn, ms)
      const id = ++seq
      pending.set(id, fn)
      worker.postMessage({ id, ms })
      return id
    },
    clear: (h) => {
      if (worker === null) clearTimeout(h as number)
      else pending.delete(h as number)
    }
  }
}

const api = (marketId: string): BotApi => {
  const user = key.value!.user
  return {
    book: (m) => getJson(apiUrl(`/v1/markets/${encodeURIComponent(m)}/book`)),
    openOrders: async () => (await getJson<{ orders: any[] }>(apiUrl(`/v1/orders/all/${user}`))).orders,
    position: (m) => getJson(apiUrl(`/v1/position/${encodeURIComponent(m)}/${user}`)),
    balanceTotal: async () => (await getJson<{ total: number }>(apiUrl(`/v1/balance/${user}`))).total,
    place: (_m, o) => placeQuote(marketId, o),
    cancel: async (id) => {
      const res = await client.value!.cancel(id)
      return res.status === 200 || res.status === 404
    }
  }
}

export const storedBot = (): StoredBot | null => {
  try {
    const raw = localStorage.getItem(STORE)
    const s = raw === null ? null : (JSON.parse(raw) as StoredBot)
    return s !== null && s.user === key.value?.user ? s : null
  } catch {
    return null
  }
}

const save = (s: StoredBot | null): void => {
  if (s === null) localStorage.removeItem(STORE)
  else localStorage.setItem(STORE, JSON.stringify(s))
}

export const startBrowserBot = (marketId: string, params: StrategyParams, spec: unknown): void => {
  if (bot !== null) return
  const previous = storedBot()
  const startedAtMs = Date.now()
  const record: { ids: ReadonlyArray<number> } = { ids: previous?.orderIds ?? [] }
  const user = key.value!.user
  const started: BrowserBot = new BrowserBot({
    marketId,
    params,
    api: api(marketId),
    timers: makeTimers(),
    adoptOrderIds: previous?.marketId === marketId ? previous.orderIds : [],
    onStatus: (s) => {
      botStatus.value = s
      // Stopped at a limit: its quotes are already cancelled and it ticks no more; the form is free again.
      if (s.state === "stopped_limit" && bot === started) {
        bot = null
        botRunning.value = false
      }
    },
    onOrderIds: (ids) => {
      record.ids = ids
      save({ user, marketId, spec, orderIds: ids, startedAtMs })
    }
  })
  bot = started
  botRunning.value = true
  botInfo.value = { marketId, spec, startedAtMs }
  leftoverQuotes.value = null
  save({ user, marketId, spec, orderIds: record.ids, startedAtMs })
  started.start()
}

/** Quotes an earlier visit's bot left resting (its tab was killed before its cancels went out); null when none. */
export const leftoverQuotes = signal<ReadonlyArray<number> | null>(null)

/**
 * On a visit with no bot running: which remembered quote ids still rest. The closing tab's
 * cancels are fire-and-forget, so the ids stay remembered; only those still open are offered.
 */
export const checkLeftover = async (): Promise<void> => {
  const s = storedBot()
  if (s === null || bot !== null || s.orderIds.length === 0) {
    leftoverQuotes.value = null
    return
  }
  const open = await getJson<{ orders: { id: number }[] }>(apiUrl(`/v1/orders/all/${s.user}`)).catch(() => null)
  if (bot !== null) return
  // Unreadable: offer them all (a cancel of a gone order is harmless).
  const still = open === null ? s.orderIds : s.orderIds.filter((id) => open.orders.some((o) => o.id === id))
  if (still.length === 0) save(null)
  leftoverQuotes.value = still.length === 0 ? null : still
}

/** Stop & Withdraw: every quote cancelled; the capital is back in `available`. */
export const stopBrowserBot = async (): Promise<void> => {
  const b = bot
  if (b === null) {
    // A bot from an earlier visit: cancel what it left.
    const s = storedBot()
    for (const id of s?.orderIds ?? []) await client.value?.cancel(id)
    save(null)
    leftoverQuotes.value = null
    return
  }
  await b.stop()
  if (bot === b) {
    bot = null
    botRunning.value = false
  }
  save(null)
}

export const isBotRunning = (): boolean => botRunning.value

const wake = (): void => {
  if (document.visibilityState === "visible") bot?.wake()
}
addEventListener("visibilitychange", wake)
addEventListener("focus", wake)
addEventListener("online", wake)
addEventListener("pageshow", wake)

// The tab is closing: cancel the quotes with requests that outlive the page.
addEventListener("pagehide", (ev) => {
  if (bot === null || (ev as PageTransitionEvent).persisted) return
  for (const q of bot.current.quotes.slice(0, 20)) {
    void fetch(apiUrl("/v1/orders/cancel"), {
      method: "POST",
      keepalive: true,
      credentials: "include",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ order_id: q.id, signature: "", nonce: 0 })
    }).catch(() => {})
  }
})

/** For the e2e tests and the bench: the bot's status without the DOM. */
;(globalThis as { __twinbookBot?: () => BotStatus | null }).__twinbookBot = () => botStatus.value
