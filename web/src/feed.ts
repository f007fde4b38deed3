// The page's one WebSocket: the client's FeedClient (subscribe, reconnect with backoff, re-seed
// from REST because the server replays no history), shared by every component with reference
// counts per channel, and its connection state shown in the header (a banner when lost).
import { effect } from "@preact/signals"
import { FeedClient, type FeedEvent, PublicClient } from "../../src/client/index.ts"
import { config, key, wsState } from "./session.ts"

let feed: FeedClient | null = null
const counts = new Map<string, number>()
type Listener = (e: FeedEvent) => void
const listeners = new Set<Listener>()

const create = (): void => {
  const cfg = config.value
  if (cfg === null) return
  feed?.close()
  const k = key.value
  const f = new FeedClient({ url: cfg.ws_url, rest: new PublicClient(cfg.api_url), ...(k === null ? {} : { key: k }) })
  feed = f
  for (const type of ["state", "book", "trades", "trade", "portfolio", "error"] as const) {
    f.on(type, (e: FeedEvent) => {
      if (feed !== f) return
      if (e.type === "state") wsState.value = e.state === "open" ? "open" : e.state === "reconnecting" ? "down" : "connecting"
      for (const l of listeners) l(e)
    })
  }
  for (const channel of counts.keys()) f.subscribe(channel)
  f.connect()
}

export const startFeed = (): void => {
  // A new key signs its own user: proofs, so the connection starts again with it.
  effect(() => {
    void key.value
    create()
  })
  addEventListener("online", () => feed?.reconnectNow())
  // A tab that slept may hold a dead socket: the heartbeat finds out, but waking is a good moment to check.
  addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible" && feed?.state !== "open") feed?.reconnectNow()
  })
}

/** Subscribes `channel` while the returned function is not called; `onEvent` sees every feed event. */
export const subscribe = (channel: string, onEvent: Listener): (() => void) => {
  listeners.add(onEvent)
  const n = counts.get(channel) ?? 0
  counts.set(channel, n + 1)
  if (n === 0) feed?.subscribe(channel)
  else {
    // Already live: hand the newcomer what the feed holds.
    const [kind, id] = [channel.slice(0, channel.indexOf(":")), channel.slice(channel.indexOf(":") + 1)]
    const b = kind === "book" ? feed?.book(id) : undefined
    if (b !== undefined) onEvent({ type: "book", marketId: id, book: b, source: "rest" })
    if (kind === "trades" && feed !== null) onEvent({ type: "trades", marketId: id, trades: feed.trades(id) })
  }
  return () => {
    listeners.delete(onEvent)
    const left = (counts.get(channel) ?? 1) - 1
    if (left > 0) counts.set(channel, left)
    else {
      counts.delete(channel)
      feed?.unsubscribe(channel)
    }
  }
}

/** For the browser tests: the socket closes as a network loss would (reconnect and re-seed follow). */
;(globalThis as { __twinbookDropFeed?: () => void }).__twinbookDropFeed = () => feed?.dropConnection()
