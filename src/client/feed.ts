// The WebSocket helper (SPEC §6): subscribes to book:, trades: and user: channels,
// reconnects with exponential backoff and jitter, and re-seeds from REST after every
// (re)connect because the server replays no history: the book from GET book, trades
// from GET trades, the portfolio from the snapshot frame that answers a user: subscribe.
// Works with the browser's WebSocket and with `ws` in Node (an injected constructor or
// factory). Browser-safe; emits typed events; its connection state is always visible.
import { sessionProof, type UserKey } from "./keys.ts"
import type { PublicClient } from "./public-client.ts"
import type { BookSnapshot, PortfolioState, ServerFrame, Trade } from "./types.ts"

/** What the helper needs of a socket: the browser's WebSocket and `ws` both have it. */
export interface WebSocketLike {
  readonly readyState: number
  send(data: string): void
  close(code?: number, reason?: string): void
  // Events typed loosely: the DOM's and ws's event classes differ; only `data`, `code` and `reason` are read.
  onopen: ((ev: any) => void) | null
  onmessage: ((ev: any) => void) | null
  onclose: ((ev: any) => void) | null
  onerror: ((ev: any) => void) | null
}

export type WebSocketFactory = (url: string) => WebSocketLike

/** idle: not started; connecting: first attempt; open: subscribed and live; reconnecting: lost, waiting or retrying; closed: `close()` called. */
export type ConnectionState = "idle" | "connecting" | "open" | "reconnecting" | "closed"

export type FeedTrade = Omit<Trade, "builder_fee"> & { readonly builder_fee?: number }

export type FeedEvent =
  | { readonly type: "state"; readonly state: ConnectionState; readonly attempt: number; readonly delayMs: number | null; readonly reason: string | null }
  /** The whole current book of a market: from REST after each (re)subscribe, then from every update. */
  | { readonly type: "book"; readonly marketId: string; readonly book: BookSnapshot; readonly source: "rest" | "ws" }
  /** The market's recent trades, newest first: the REST seed merged with what arrived since (deduplicated by id). */
  | { readonly type: "trades"; readonly marketId: string; readonly trades: ReadonlyArray<FeedTrade> }
  /** One new trade pushed live (after `trades` has seeded the list). */
  | { readonly type: "trade"; readonly marketId: string; readonly trade: FeedTrade }
  | { readonly type: "portfolio"; readonly user: string; readonly ts: number; readonly state: PortfolioState; readonly source: "snapshot" | "update" }
  /** An `error` or `portfolio_error` frame, or a failed REST re-seed (code `seed_failed`). */
  | { readonly type: "error"; readonly code: string; readonly channel: string | null; readonly detail: string }

type Handler<K extends FeedEvent["type"]> = (event: Extract<FeedEvent, { type: K }>) => void

export interface BackoffOptions {
  /** First retry delay (default 500 ms). */
  readonly initialMs?: number
  /** Ceiling (default 30 s). */
  readonly maxMs?: number
  /** Growth per failed attempt (default 2). */
  readonly factor?: number
  /** Fraction of the delay drawn at random, 0..1 (default 0.5): delay · (1 − jitter · random()). */
  readonly jitter?: number
}

export interface FeedOptions {
  /** `{ws_url}`, e.g. `ws://127.0.0.1:8080/v1/ws`. */
  readonly url: string
  /** Reads for the re-seed (any PublicClient or ApiClient of the same service). */
  readonly rest: PublicClient
  /** A WebSocket constructor: `globalThis.WebSocket` by default (browsers), `ws`'s in Node. */
  readonly WebSocket?: new (url: string) => WebSocketLike
  /** Or a factory, e.g. Node with the session cookie: `(u) => new WS(u, { headers: { cookie } })`. */
  readonly connect?: WebSocketFactory
  /** Signs user: proofs (SPEC §5.6) with a fresh timestamp on each (re)connect; without it the cookie must prove identity. */
  readonly key?: UserKey
  /** Unix seconds for the proofs; default the wall clock. */
  readonly nowSec?: () => number
  readonly backoff?: BackoffOptions
  /** 0..1; default Math.random (jitter only spreads reconnects; it decides nothing else). */
  readonly random?: () => number
  /** Sends a ping this often and reconnects when nothing arrives for twice as long (default 20 s; 0 disables). */
  readonly heartbeatMs?: number
  /** How many trades the REST seed asks for (default 50, max 200). */
  readonly tradesLimit?: number
  /**
   * REST reads are edge-cached (book 1 s, trades 3 s, SPEC §4), so a seed may predate the
   * subscription. The book is read again after `bookRereadMs` (default 1,100) when its `ts`
   * is older than the connection's first pong and no push has replaced it; trades once
   * after `tradesRereadMs` (default 3,100), merged by id.
   */
  readonly bookRereadMs?: number
  readonly tradesRereadMs?: number
}

const OPEN = 1

const defaultRandom = (): number => Math.random() // live-only: reconnect jitter spreads clients; nothing replays it
const wallClockSec = (): number => Math.floor(Date.now() / 1000) // live-only: user: proof timestamps of a live client

const channelKind = (channel: string): { kind: "book" | "trades" | "user"; id: string } | null => {
  const i = channel.indexOf(":")
  const kind = channel.slice(0, i)
  return kind === "book" || kind === "trades" || kind === "user" ? { kind, id: channel.slice(i + 1) } : null
}

export class FeedClient {
  private socket: WebSocketLike | null = null
  private stateNow: ConnectionState = "idle"
  private attempt = 0
  private readonly channels = new Set<string>()
  private readonly handlers = new Map<string, Set<(e: FeedEvent) => void>>()
  private readonly books = new Map<string, BookSnapshot>()
  private readonly tradeLists = new Map<string, FeedTrade[]>()
  /** Markets whose trades are seeded on the current connection (until then, pushes are held). */
  private readonly tradesSeeded = new Set<string>()
  private readonly portfolios = new Map<string, { ts: number; state: PortfolioState }>()
  private retryTimer: ReturnType<typeof setTimeout> | null = null
  private heartbeatTimer: ReturnType<typeof setInterval> | null = null
  private lastHeardTick = 0
  private heardTicks = 0
  /** Bumped per connection: REST seeds that answer after a reconnect are dropped. */
  private generation = 0
  /** Pings sent on this connection and not answered yet (pongs come back in order). */
  private pingsInFlight = 0
  /** Each waits for the pong of its own ping: `skip` pongs of earlier pings come first. */
  private readonly pongWaiters: Array<{ skip: number; resolve: (ts: number) => void }> = []
  /** Per channel, the server's time just after its subscribe (a pong that followed it). */
  private readonly subscribedAt = new Map<string, Promise<number>>()
  /** `ts` of the newest book pushed on this connection, per market. */
  private readonly pushedTs = new Map<string, number>()
  private readonly seedTimers = new Set<ReturnType<typeof setTimeout>>()
  /** `user:` channels whose refused proof was re-signed once on this connection. */
  private readonly proofRetried = new Set<string>()

  constructor(private readonly opts: FeedOptions) {}

  get state(): ConnectionState {
    return this.stateNow
  }

  /** Listens to one kind of event; returns the function that stops listening. */
  on<K extends FeedEvent["type"]>(type: K, handler: Handler<K>): () => void {
    let set = this.handlers.get(type)
    if (set === undefined) this.handlers.set(type, (set = new Set()))
    const h = handler as (e: FeedEvent) => void
    set.add(h)
    return () => void set.delete(h)
  }

  /** The latest book of a subscribed market, if seeded. */
  book(marketId: string): BookSnapshot | undefined {
    return this.books.get(marketId)
  }

  /** Recent trades of a subscribed market, newest first. */
  trades(marketId: string): ReadonlyArray<FeedTrade> {
    return this.tradeLists.get(marketId) ?? []
  }

  portfolio(user: string): PortfolioState | undefined {
    return this.portfolios.get(user)?.state
  }

  /** Opens the connection (idempotent); channels subscribed before or after are kept across reconnects. */
  connect(): void {
    if (this.stateNow === "idle" || this.stateNow === "closed") {
      this.attempt = 0
      this.open("connecting")
    }
  }

  /** Stops for good: no reconnect until `connect()` again. */
  close(): void {
    this.clearTimers()
    this.setState("closed", null, null)
    const s = this.socket
    this.socket = null
    if (s !== null) {
      s.onclose = null
      s.onmessage = null
      try {
        s.close(1000, "client closed")
      } catch {
        // never opened
      }
    }
  }

  /** Drops the current socket and reconnects now, backoff reset (e.g. on the browser's `online` or a tab waking). */
  reconnectNow(): void {
    if (this.stateNow === "closed" || this.stateNow === "idle") return this.connect()
    this.attempt = 0
    this.dropSocket()
    this.open("reconnecting")
  }

  /**
   * Closes the current socket the way a network loss would: the usual reconnect with backoff and
   * re-seed from REST follow (unlike `close()`, which stops for good). For tests and diagnostics.
   */
  dropConnection(): void {
    try {
      this.socket?.close(4001, "dropped by the client")
    } catch {
      // not open yet
    }
  }

  subscribe(channel: string): void {
    if (channelKind(channel) === null) throw new RangeError(`unknown channel ${channel}: book:<market_id>, trades:<market_id> or user:<addr>`)
    this.channels.add(channel)
    if (this.socket?.readyState === OPEN) {
      this.sendSubscribe(channel)
      this.markSubscriptionPoint([channel])
    }
  }

  unsubscribe(channel: string): void {
    if (!this.channels.delete(channel)) return
    const c = channelKind(channel)!
    if (c.kind === "book") this.books.delete(c.id)
    if (c.kind === "trades") {
      this.tradeLists.delete(c.id)
      this.tradesSeeded.delete(c.id)
    }
    if (c.kind === "user") this.portfolios.delete(c.id)
    if (this.socket?.readyState === OPEN) this.send({ type: "unsubscribe", channel })
  }

  subscribeBook(marketId: string): void {
    this.subscribe(`book:${marketId}`)
  }

  subscribeTrades(marketId: string): void {
    this.subscribe(`trades:${marketId}`)
  }

  /** The portfolio channel of `user` (default: the key's user). */
  subscribeUser(user: string | undefined = this.opts.key?.user): void {
    if (user === undefined) throw new RangeError("subscribeUser needs a user (or a key)")
    this.subscribe(`user:${user}`)
  }

  // ---- connection ----

  private open(state: "connecting" | "reconnecting"): void {
    this.setState(state, null, null)
    const gen = ++this.generation
    let socket: WebSocketLike
    try {
      socket = this.opts.connect !== undefined ? this.opts.connect(this.opts.url) : new (this.opts.WebSocket ?? (globalThis as any).WebSocket)(this.opts.url)
    } catch (err) {
      return this.scheduleReconnect(String(err))
    }
    this.socket = socket
    socket.onopen = () => {
      if (gen !== this.generation) return
      this.attempt = 0
      this.tradesSeeded.clear()
      this.pushedTs.clear()
      this.pingsInFlight = 0
      this.pongWaiters.length = 0
      this.subscribedAt.clear()
      this.proofRetried.clear()
      this.heard()
      this.setState("open", null, null)
      for (const channel of this.channels) this.sendSubscribe(channel)
      this.markSubscriptionPoint([...this.channels])
      this.startHeartbeat()
    }
    socket.onmessage = (ev: { data: unknown }) => {
      if (gen !== this.generation) return
      this.heard()
      let frame: ServerFrame
      try {
        frame = JSON.parse(typeof ev.data === "string" ? ev.data : String(ev.data)) as ServerFrame
      } catch {
        return
      }
      this.onFrame(frame, gen)
    }
    socket.onerror = () => {
      // A close always follows an error; the reconnect is decided there.
    }
    socket.onclose = (ev: { code: number; reason: string }) => {
      if (gen !== this.generation) return
      this.socket = null
      this.stopHeartbeat()
      this.scheduleReconnect(`closed ${ev.code}${ev.reason === "" ? "" : ` ${ev.reason}`}`)
    }
  }

  private scheduleReconnect(reason: string): void {
    if (this.stateNow === "closed") return
    const b = this.opts.backoff ?? {}
    const base = Math.min(b.maxMs ?? 30_000, (b.initialMs ?? 500) * (b.factor ?? 2) ** this.attempt)
    const delayMs = Math.round(base * (1 - (b.jitter ?? 0.5) * (this.opts.random ?? defaultRandom)()))
    this.attempt++
    this.setState("reconnecting", delayMs, reason)
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null
      this.open("reconnecting")
    }, delayMs)
  }

  private dropSocket(): void {
    this.clearTimers()
    const s = this.socket
    this.socket = null
    this.generation++
    if (s !== null) {
      s.onclose = null
      s.onmessage = null
      s.onopen = null
      try {
        s.close(4000, "reconnecting")
      } catch {
        // already closed
      }
    }
  }

  private clearTimers(): void {
    if (this.retryTimer !== null) clearTimeout(this.retryTimer)
    this.retryTimer = null
    for (const t of this.seedTimers) clearTimeout(t)
    this.seedTimers.clear()
    this.stopHeartbeat()
  }

  private later(ms: number, run: () => void): void {
    const timer = setTimeout(() => {
      this.seedTimers.delete(timer)
      run()
    }, ms)
    this.seedTimers.add(timer)
  }

  /** The subscription point of `channel` on this connection (never resolves if it drops first). */
  private subscriptionPoint(channel: string): Promise<number> {
    return this.subscribedAt.get(channel) ?? new Promise<number>(() => {})
  }

  /** Liveness counted in heartbeat ticks, so the helper reads no clock of its own. */
  private heard(): void {
    this.lastHeardTick = this.heardTicks
  }

  private startHeartbeat(): void {
    const every = this.opts.heartbeatMs ?? 20_000
    if (every <= 0) return
    this.stopHeartbeat()
    this.heartbeatTimer = setInterval(() => {
      this.heardTicks++
      // Silent for two whole intervals: the socket is dead even if it never said so (sleep, NAT).
      if (this.heardTicks - this.lastHeardTick >= 2) {
        this.dropSocket()
        return this.scheduleReconnect("heartbeat lost")
      }
      this.ping()
    }, every)
  }

  private ping(): void {
    this.pingsInFlight++
    this.send({ type: "ping" })
  }

  /**
   * A ping right after subscribes: its pong's `ts` is the server's time after they were
   * handled (frames are answered in order), against which a REST seed's `ts` is judged.
   */
  private markSubscriptionPoint(channels: ReadonlyArray<string>): void {
    const point = new Promise<number>((resolve) => this.pongWaiters.push({ skip: this.pingsInFlight, resolve }))
    for (const c of channels) this.subscribedAt.set(c, point)
    this.ping()
  }

  private stopHeartbeat(): void {
    if (this.heartbeatTimer !== null) clearInterval(this.heartbeatTimer)
    this.heartbeatTimer = null
  }

  private send(frame: object): void {
    try {
      this.socket?.send(JSON.stringify(frame))
    } catch {
      // closing: the close handler reconnects and re-subscribes
    }
  }

  private sendSubscribe(channel: string): void {
    const c = channelKind(channel)!
    if (c.kind === "user" && this.opts.key !== undefined && this.opts.key.user === c.id) {
      // A proof the key has not signed before: the server accepts each proof once.
      const { timestamp, signature } = sessionProof(this.opts.key, (this.opts.nowSec ?? wallClockSec)())
      this.send({ type: "subscribe", channel, signature, timestamp })
    } else {
      this.send({ type: "subscribe", channel })
    }
  }

  /**
   * A proof of this key's refused: another page or process of the same key may have used that
   * second's proof first (the server accepts each once). Tried once more per connection, with the
   * next timestamp, before it is an error.
   */
  private retryProof(channel: string): boolean {
    const key = this.opts.key
    if (key === undefined || channel !== `user:${key.user}` || !this.channels.has(channel) || this.proofRetried.has(channel)) return false
    this.proofRetried.add(channel)
    this.sendSubscribe(channel)
    return true
  }

  // ---- frames and re-seeding ----

  private onFrame(frame: ServerFrame, gen: number): void {
    switch (frame.type) {
      case "subscribed": {
        // Subscribed first, then read: every change after the read arrives as a push.
        const c = channelKind(frame.channel)
        if (c?.kind === "book") void this.seedBook(c.id, gen)
        if (c?.kind === "trades") void this.seedTrades(c.id, gen)
        return
      }
      case "pong": {
        this.pingsInFlight = Math.max(0, this.pingsInFlight - 1)
        const due = this.pongWaiters.filter((w) => w.skip-- === 0)
        for (const w of due) this.pongWaiters.splice(this.pongWaiters.indexOf(w), 1)
        for (const w of due) w.resolve(frame.ts)
        return
      }
      case "book_update":
        return this.applyBook(frame.market_id, frame.snapshot, "ws")
      case "trade": {
        const id = frame.market_id
        if (!this.channels.has(`trades:${id}`)) return
        const list = this.tradeLists.get(id) ?? []
        if (list.some((t) => t.id === frame.trade.id)) return
        list.unshift(frame.trade)
        this.tradeLists.set(id, list.slice(0, this.opts.tradesLimit ?? 50))
        // Before the seed lands, the push is kept and merged into the `trades` event.
        if (this.tradesSeeded.has(id)) this.emit({ type: "trade", marketId: id, trade: frame.trade })
        return
      }
      case "portfolio_snapshot":
      case "portfolio_update": {
        const prev = this.portfolios.get(frame.user)
        if (prev !== undefined && frame.type === "portfolio_update" && frame.ts < prev.ts) return
        this.portfolios.set(frame.user, { ts: frame.ts, state: frame.state })
        return this.emit({ type: "portfolio", user: frame.user, ts: frame.ts, state: frame.state, source: frame.type === "portfolio_snapshot" ? "snapshot" : "update" })
      }
      case "error":
        return this.emit({ type: "error", code: frame.code, channel: frame.channel, detail: frame.detail })
      case "portfolio_error":
        if (frame.error === "unauthorized" && this.retryProof(frame.channel)) return
        return this.emit({ type: "error", code: frame.error, channel: frame.channel, detail: `user channel refused: ${frame.error}` })
      default:
        return
    }
  }

  /**
   * Pushes are full snapshots and always win over what was held; a REST seed is applied
   * unless a push on this connection is at least as new (pushes lost in an outage never
   * count against it).
   */
  private applyBook(marketId: string, book: BookSnapshot, source: "rest" | "ws"): void {
    if (!this.channels.has(`book:${marketId}`)) return
    const pushed = this.pushedTs.get(marketId)
    if (pushed !== undefined && (source === "rest" ? book.ts <= pushed : book.ts < pushed)) return
    if (source === "ws") this.pushedTs.set(marketId, book.ts)
    this.books.set(marketId, book)
    this.emit({ type: "book", marketId, book, source })
  }

  private async seedBook(marketId: string, gen: number, attempt = 0): Promise<void> {
    try {
      const res = await this.opts.rest.book(marketId)
      if (gen !== this.generation || !this.channels.has(`book:${marketId}`)) return
      if (res.status !== 200) return this.emit({ type: "error", code: "seed_failed", channel: `book:${marketId}`, detail: `GET book: ${res.status}` })
      this.applyBook(marketId, res.body, "rest")
      // An edge-cached book from before the subscription may miss a change: read again
      // once the cache has turned over, unless a push (a full snapshot) came first.
      const point = await this.subscriptionPoint(`book:${marketId}`)
      if (gen === this.generation && res.body.ts < point && !this.pushedTs.has(marketId) && attempt < 3) {
        this.later(this.opts.bookRereadMs ?? 1_100, () => {
          if (gen === this.generation && !this.pushedTs.has(marketId)) void this.seedBook(marketId, gen, attempt + 1)
        })
      }
    } catch (err) {
      if (gen === this.generation) this.emit({ type: "error", code: "seed_failed", channel: `book:${marketId}`, detail: String(err) })
    }
  }

  private async seedTrades(marketId: string, gen: number, reread = false): Promise<void> {
    try {
      const limit = this.opts.tradesLimit ?? 50
      const res = await this.opts.rest.marketTrades(marketId, { limit })
      if (gen !== this.generation || !this.channels.has(`trades:${marketId}`)) return
      if (res.status !== 200) return this.emit({ type: "error", code: "seed_failed", channel: `trades:${marketId}`, detail: `GET trades: ${res.status}` })
      const held = this.tradeLists.get(marketId) ?? []
      const byId = new Map<number, FeedTrade>()
      for (const t of [...held, ...res.body.trades]) if (!byId.has(t.id)) byId.set(t.id, t)
      const merged = [...byId.values()].sort((a, b) => b.id - a.id).slice(0, limit)
      const changed = merged.length !== held.length || merged.some((t, i) => t.id !== held[i]!.id)
      this.tradeLists.set(marketId, merged)
      this.tradesSeeded.add(marketId)
      if (!reread || changed) this.emit({ type: "trades", marketId, trades: merged })
      // The list is edge-cached 3 s: once it has turned over, merge it again.
      if (!reread) this.later(this.opts.tradesRereadMs ?? 3_100, () => void (gen === this.generation && this.seedTrades(marketId, gen, true)))
    } catch (err) {
      if (gen === this.generation) this.emit({ type: "error", code: "seed_failed", channel: `trades:${marketId}`, detail: String(err) })
    }
  }

  private setState(state: ConnectionState, delayMs: number | null, reason: string | null): void {
    this.stateNow = state
    this.emit({ type: "state", state, attempt: this.attempt, delayMs, reason })
  }

  private emit(event: FeedEvent): void {
    for (const h of this.handlers.get(event.type) ?? []) {
      try {
        h(event)
      } catch {
        // A listener's failure must not break the feed for the others.
      }
    }
  }
}
