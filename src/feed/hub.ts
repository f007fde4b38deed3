// The WebSocket feed without a transport: channels → frames (SPEC §6). The live
// adapter wires `ws` sockets to it; the simulator wires simulated sockets.
// Changes are coalesced: the exchange marks markets and users dirty, and
// `flush()` sends one book_update per changed book and one portfolio_update
// per changed user, after the trade frames, in journal order.
// Limits (docs/api.md "Limits"): connections per address and in total, subscriptions per
// connection and in total, bytes queued per socket and in total; every frame the hub answers
// is small (a bad channel is echoed as a short prefix), so a client cannot make it write much.
import { isUserKey, parseSignatureHex, verifyUser } from "../auth/ed25519.ts"
import { sessionMessage } from "../auth/messages.ts"
import { SessionProofs, USER_PROOF_WINDOW_SEC } from "../auth/session-proofs.ts"
import { jsonTooDeep, MAX_JSON_DEPTH } from "../domain/json-depth.ts"
import type { Exchange } from "../service/exchange.ts"
import { addressKey } from "../usecase/address-key.ts"
import type { TradeRecord } from "../service/history.ts"
import { tradeFromFill } from "../service/history.ts"
import { bookView, type MarkMemo, PortfolioJson, portfolioState } from "../service/views.ts"

export interface FeedSocket {
  /** The user proved by the session cookie on the upgrade request, if any. */
  readonly cookieUser: string | null
  /** The client's network address, for the per-address connection limit (none: not counted). */
  readonly address?: string
  send(frame: string): void
  /** Bytes queued and not yet written. */
  bufferedBytes(): number
  /**
   * Closes the connection; the transport calls `disconnect` once it is closed. Until then the
   * socket keeps its connection slot, but the hub sends it nothing and reads nothing from it.
   */
  close(code: number, reason: string): void
}

/** A socket with more than this queued is a slow consumer and is closed (1013); it re-seeds from REST. */
export const MAX_BUFFERED_BYTES = 4 * 1024 * 1024
export { USER_PROOF_WINDOW_SEC }
/** A server frame's header, at most (RFC 6455 §5.2, unmasked); a frame costs its text plus this. */
const FRAME_HEADER_BYTES = 10
/** Error frames echo at most this much of a channel the client sent: every valid channel is shorter. */
export const MAX_ECHOED_CHANNEL_CHARS = 128

interface SocketState {
  readonly channels: Set<string>
  /** Bytes the socket had queued when last looked at (part of `bufferedTotal` while not closing). */
  counted: number
  /** Closed by the hub, waiting for the transport's `disconnect`. */
  closing: boolean
}

/** The hub's caps (src/api/context.ts AbuseLimits); Infinity when not given. */
export interface FeedLimits {
  readonly connectionsPerAddress: number
  readonly subscriptionsPerConnection: number
  /** Connections in total, closing ones included (they still hold their socket). */
  readonly connections: number
  /** Subscriptions held by all connections together. */
  readonly subscriptions: number
  /** Bytes queued for all sockets together; past it the biggest queues are closed as slow consumers. */
  readonly bufferedBytes: number
}

export const NO_FEED_LIMITS: FeedLimits = {
  connectionsPerAddress: Infinity,
  subscriptionsPerConnection: Infinity,
  connections: Infinity,
  subscriptions: Infinity,
  bufferedBytes: Infinity
}

/** Which limit closed a connection (`limitCloses`; /metrics `twinbook_ws_limit_closes_total{limit}`). */
export type FeedLimit = "connections_per_address" | "connections" | "subscriptions_per_connection" | "subscriptions" | "buffered_bytes"

/** WebSocket close code for a policy violation (RFC 6455 §7.4.1): a limit of this client's was exceeded. */
export const CLOSE_POLICY = 1008
/** "Try again later" (RFC 6455 §7.4.1, IANA registry): the server is full, or this socket is a slow consumer. */
export const CLOSE_TRY_LATER = 1013

const frame = (value: unknown): string => JSON.stringify(value)

/** The channel as echoed in a reply: what the client sent, cut to a short prefix. */
const echo = (channel: string | null): string | null =>
  channel === null || channel.length <= MAX_ECHOED_CHANNEL_CHARS ? channel : channel.slice(0, MAX_ECHOED_CHANNEL_CHARS)

export class FeedHub {
  private readonly limits: FeedLimits
  private readonly sockets = new Map<FeedSocket, SocketState>()
  /** Channel → its live subscribers; a channel's entry leaves with its last subscriber. */
  private readonly subscribers = new Map<string, Set<FeedSocket>>()
  /** The users whose `user:` channel has a live subscriber: a book change looks only at these. */
  private readonly liveUsers = new Set<string>()
  private readonly perAddress = new Map<string, number>()
  private subscriptionCount = 0
  /**
   * Bytes queued across the live sockets, as last looked at: each socket's count is read again at
   * its next send, and all of them when this passes the cap, so it is never below the real sum.
   */
  private bufferedTotal = 0
  private readonly dirtyMarkets = new Set<string>()
  private readonly dirtyUsers = new Set<string>()
  private pendingTrades: TradeRecord[] = []
  /** Portfolio JSON with each unchanged position's text kept between flushes. */
  private readonly portfolios: PortfolioJson
  private onDirty: () => void = () => {}
  /** Frames handed to sockets, and sockets closed as slow consumers (read by /metrics; counts only). */
  framesSent = 0
  slowConsumerCloses = 0
  /** Connections closed (or refused) by each limit. */
  readonly limitCloses: Record<FeedLimit, number> = { connections_per_address: 0, connections: 0, subscriptions_per_connection: 0, subscriptions: 0, buffered_bytes: 0 }

  constructor(
    private readonly exchange: Exchange,
    private readonly nowMs: () => number,
    limits: Partial<FeedLimits> = {},
    /** Accepted session proofs, shared with registration (each proof opens one thing, once). */
    private readonly proofs: SessionProofs = new SessionProofs(() => Math.floor(nowMs() / 1000)) // live-only: proofs' signed timestamps expire on the wall clock
  ) {
    this.limits = { ...NO_FEED_LIMITS, ...limits }
    this.portfolios = new PortfolioJson(exchange)
    exchange.onApply((_record, result) => {
      let changed = false
      for (const ev of result.events) {
        switch (ev.type) {
          case "fill":
            if (this.subscribers.has(`trades:${ev.marketId}`)) this.pendingTrades.push(tradeFromFill(ev))
            this.dirtyMarkets.add(ev.marketId)
            changed = true
            break
          case "order_rested":
            this.dirtyMarkets.add(this.exchange.engine.orders.get(ev.orderId)?.market.id ?? "")
            changed = true
            break
          case "order_cancelled":
            this.dirtyMarkets.add(ev.marketId)
            changed = true
            break
          case "balance":
          case "position":
            this.dirtyUsers.add(ev.user)
            changed = true
            break
          case "market_status":
            // A holder's positions read status and resolution. A resolution also redeems every holder
            // (their own events), and a halt changes nothing a position shows; this guards what might.
            this.portfolios.statusChanged()
            break
        }
      }
      if (changed) this.onDirty()
    })
  }

  /** The live adapter schedules a flush (e.g. setImmediate) when something changed. */
  setFlushScheduler(schedule: () => void): void {
    this.onDirty = schedule
  }

  /**
   * Registers a connection; one over its address's limit (1008) or over the total (1013) is
   * closed at once and false returned.
   */
  connect(socket: FeedSocket): boolean {
    // Counted like the rate limiter's buckets: IPv6 by its /64, IPv4-mapped as IPv4.
    const address = socket.address === undefined ? undefined : addressKey(socket.address)
    const fromAddress = address === undefined ? 0 : (this.perAddress.get(address) ?? 0)
    if (fromAddress >= this.limits.connectionsPerAddress) {
      return this.refuse(socket, "connections_per_address", CLOSE_POLICY, `too many connections from this address (max ${this.limits.connectionsPerAddress})`)
    }
    if (this.sockets.size >= this.limits.connections) {
      return this.refuse(socket, "connections", CLOSE_TRY_LATER, `server connection limit reached (max ${this.limits.connections}); retry later`)
    }
    if (address !== undefined) this.perAddress.set(address, fromAddress + 1)
    this.sockets.set(socket, { channels: new Set(), counted: 0, closing: false })
    return true
  }

  /** The transport has closed the socket (whoever closed it): its slot and everything it held are freed. */
  disconnect(socket: FeedSocket): void {
    const state = this.sockets.get(socket)
    if (state === undefined) return
    if (!state.closing) this.release(socket, state)
    this.sockets.delete(socket)
    const address = socket.address === undefined ? undefined : addressKey(socket.address)
    if (address !== undefined) {
      const open = (this.perAddress.get(address) ?? 1) - 1
      if (open > 0) this.perAddress.set(address, open)
      else this.perAddress.delete(address)
    }
  }

  /** Open connections, those the hub is closing included. */
  get connections(): number {
    return this.sockets.size
  }

  /** Subscriptions held by open connections (a channel counted once per socket). */
  get subscriptions(): number {
    return this.subscriptionCount
  }

  /** Bytes queued for the live sockets now (each asked; for /metrics). */
  get bufferedBytes(): number {
    let n = 0
    for (const [socket, state] of this.sockets) if (!state.closing) n += socket.bufferedBytes()
    return n
  }

  /** Channels with at least one subscriber (no entry outlives its last subscriber). */
  get channelCount(): number {
    return this.subscribers.size
  }

  onMessage(socket: FeedSocket, text: string): void {
    // A socket the hub already dropped (slow consumer, still closing) may have frames
    // in flight; answering them would re-add it to subscribers that disconnect() no
    // longer clears.
    if (this.sockets.get(socket)?.closing !== false) return
    if (jsonTooDeep(text)) {
      return this.send(socket, frame({ type: "error", code: "bad_json", channel: null, detail: `frame nests deeper than ${MAX_JSON_DEPTH} levels` }))
    }
    let msg: unknown
    try {
      msg = JSON.parse(text)
    } catch {
      return this.send(socket, frame({ type: "error", code: "bad_json", channel: null, detail: "frame is not valid JSON" }))
    }
    if (msg === null || typeof msg !== "object" || Array.isArray(msg)) {
      return this.send(socket, frame({ type: "error", code: "bad_json", channel: null, detail: "frame must be a JSON object" }))
    }
    const m = msg as Record<string, unknown>
    const channel = typeof m.channel === "string" ? m.channel : null
    switch (m.type) {
      case "ping":
        return this.send(socket, frame({ type: "pong", ts: this.exchange.journalMs() }))
      case "subscribe":
        return this.subscribe(socket, channel, m)
      case "unsubscribe": {
        const key = channel === null ? null : this.channelKey(channel)
        if (key === null) return this.send(socket, frame({ type: "error", code: "invalid_channel", channel: echo(channel), detail: "unknown channel" }))
        if (this.sockets.get(socket)?.channels.delete(key)) this.subscriptionCount--
        this.removeSubscriber(key, socket)
        return this.send(socket, frame({ type: "unsubscribed", channel }))
      }
      default:
        return this.send(socket, frame({ type: "error", code: "unknown_type", channel: echo(channel), detail: "type: subscribe, unsubscribe or ping" }))
    }
  }

  /** Canonical channel key: `book:`/`trades:` with the market id (slugs accepted), `user:` with the key. */
  private channelKey(channel: string): string | null {
    const colon = channel.indexOf(":")
    if (colon < 0) return null
    const kind = channel.slice(0, colon)
    const id = channel.slice(colon + 1)
    if (kind === "book" || kind === "trades") {
      const found = this.exchange.catalog.market(id)
      return found === undefined ? null : `${kind}:${found.market.market_id}`
    }
    if (kind === "user") return isUserKey(id) ? channel : null
    return null
  }

  private subscribe(socket: FeedSocket, channel: string | null, m: Record<string, unknown>): void {
    if (channel?.startsWith("user:")) return this.subscribeUser(socket, channel, m)
    const key = channel === null ? null : this.channelKey(channel)
    if (key === null) return this.send(socket, frame({ type: "error", code: "invalid_channel", channel: echo(channel), detail: "channel: book:<market_id>, trades:<market_id> or user:<addr>" }))
    if (!this.add(socket, key)) return
    this.send(socket, frame({ type: "subscribed", channel }))
  }

  /**
   * `user:<addr>`: the cookie's user, or a fresh three-line signature by <addr>, accepted once
   * (a proof already accepted here or at registration is refused). A proof for A never opens user:B.
   */
  private subscribeUser(socket: FeedSocket, channel: string, m: Record<string, unknown>): void {
    const reject = (error: "unauthorized" | "address_mismatch" | "bad_request") =>
      this.send(socket, frame({ type: "portfolio_error", channel: echo(channel), error }))
    const addr = channel.slice("user:".length)
    if (!isUserKey(addr)) return reject("bad_request")
    let ok = socket.cookieUser === addr
    if (!ok) {
      if (m.signature === undefined && m.timestamp === undefined) return reject(socket.cookieUser === null ? "unauthorized" : "address_mismatch")
      const sig = parseSignatureHex(m.signature)
      const ts = m.timestamp
      if (sig === null || typeof ts !== "number" || !Number.isSafeInteger(ts)) return reject("bad_request")
      if (Math.abs(Math.floor(this.nowMs() / 1000) - ts) > USER_PROOF_WINDOW_SEC) return reject("unauthorized") // live-only: a client's signed timestamp is checked against the wall clock
      ok = verifyUser(addr, sessionMessage(addr, ts), sig)
      if (!ok) return reject(socket.cookieUser !== null && socket.cookieUser !== addr ? "address_mismatch" : "unauthorized")
      if (!this.proofs.claim(addr, ts)) return reject("unauthorized")
    }
    if (!this.add(socket, channel)) return
    this.send(socket, frame({ type: "subscribed", channel }))
    this.send(socket, frame({ type: "portfolio_snapshot", user: addr, ts: this.exchange.journalMs(), state: portfolioState(this.exchange, addr) }))
  }

  /**
   * Subscribes; a connection past its own subscription limit (1008) or taking one past the total
   * (1013) is closed and false returned. Re-subscribing a held channel is free.
   */
  private add(socket: FeedSocket, key: string): boolean {
    const state = this.sockets.get(socket)
    if (state === undefined || state.closing) return false
    if (state.channels.has(key)) return true
    if (state.channels.size >= this.limits.subscriptionsPerConnection) {
      this.close(socket, state, "subscriptions_per_connection", CLOSE_POLICY, `too many subscriptions on one connection (max ${this.limits.subscriptionsPerConnection})`)
      return false
    }
    if (this.subscriptionCount >= this.limits.subscriptions) {
      this.close(socket, state, "subscriptions", CLOSE_TRY_LATER, `server subscription limit reached (max ${this.limits.subscriptions}); retry later`)
      return false
    }
    state.channels.add(key)
    this.subscriptionCount++
    let set = this.subscribers.get(key)
    if (set === undefined) {
      this.subscribers.set(key, (set = new Set()))
      if (key.startsWith("user:")) this.liveUsers.add(key.slice(5))
    }
    set.add(socket)
    return true
  }

  private removeSubscriber(key: string, socket: FeedSocket): void {
    const set = this.subscribers.get(key)
    if (set === undefined || !set.delete(socket) || set.size > 0) return
    this.subscribers.delete(key)
    if (key.startsWith("user:")) {
      this.liveUsers.delete(key.slice(5))
      this.portfolios.forget(key.slice(5))
    }
  }

  /** A connection refused at connect: never registered, so only counted and closed. */
  private refuse(socket: FeedSocket, limit: FeedLimit, code: number, reason: string): false {
    this.limitCloses[limit]++
    socket.close(code, reason)
    return false
  }

  /**
   * Closes a registered socket: its subscriptions and queued bytes leave the hub's counts now,
   * its connection slot when the transport reports it closed (`disconnect`).
   */
  private close(socket: FeedSocket, state: SocketState, limit: FeedLimit | "slow_consumer", code: number, reason: string): void {
    if (state.closing) return
    if (limit === "slow_consumer") this.slowConsumerCloses++
    else this.limitCloses[limit]++
    this.release(socket, state)
    state.closing = true
    // Last: a transport may report the close (disconnect) from inside this call.
    socket.close(code, reason)
  }

  private release(socket: FeedSocket, state: SocketState): void {
    for (const ch of state.channels) this.removeSubscriber(ch, socket)
    this.subscriptionCount -= state.channels.size
    state.channels.clear()
    this.bufferedTotal -= state.counted
    state.counted = 0
  }

  /** Looks at the socket's queue again: the total follows. */
  private observe(socket: FeedSocket, state: SocketState): number {
    const queued = socket.bufferedBytes()
    this.bufferedTotal += queued - state.counted
    state.counted = queued
    return queued
  }

  private send(socket: FeedSocket, data: string): void {
    const state = this.sockets.get(socket)
    if (state === undefined || state.closing) return
    if (this.observe(socket, state) > MAX_BUFFERED_BYTES) return this.close(socket, state, "slow_consumer", CLOSE_TRY_LATER, "slow consumer")
    const bytes = data.length + FRAME_HEADER_BYTES
    if (this.bufferedTotal + bytes > this.limits.bufferedBytes && !this.makeRoom(socket, bytes)) return
    this.framesSent++
    socket.send(data)
    this.observe(socket, state)
  }

  /**
   * The queues together would pass the cap: every socket's queue is read again and, while still
   * over, the longest queues are closed as slow consumers (1013) until the total is under three
   * quarters of the cap (so the next recount is a quarter of the cap away). A socket with
   * nothing queued is never closed for the others' queues. False when `socket` itself was closed.
   */
  private makeRoom(socket: FeedSocket, bytes: number): boolean {
    const holders: Array<[FeedSocket, SocketState]> = []
    this.bufferedTotal = 0
    for (const [s, state] of this.sockets) {
      if (state.closing) continue
      state.counted = s.bufferedBytes()
      this.bufferedTotal += state.counted
      if (state.counted > 0) holders.push([s, state])
    }
    const cap = this.limits.bufferedBytes
    if (this.bufferedTotal + bytes <= cap) return true
    holders.sort((a, b) => b[1].counted - a[1].counted)
    let kept = true
    for (const [s, state] of holders) {
      if (this.bufferedTotal + bytes <= cap * 0.75) break
      this.limitCloses.buffered_bytes++
      this.close(s, state, "slow_consumer", CLOSE_TRY_LATER, "slow consumer")
      if (s === socket) kept = false
    }
    return kept
  }

  /** Whether anything changed since the last render (a flush would send something). */
  get dirty(): boolean {
    return this.pendingTrades.length > 0 || this.dirtyMarkets.size > 0 || this.dirtyUsers.size > 0
  }

  /** Sends everything that changed since the last flush: trades, then books, then portfolios. */
  flush(): void {
    this.deliver(this.render())
  }

  /**
   * Renders everything that changed since the last render (trades, then books, then portfolios)
   * with the subscribers of that moment, for `deliver` to send later: the durable feed renders at
   * a journal batch's cut, when state is exactly that batch's prefix, and sends once it is durable.
   */
  render(): RenderedFrames {
    const out: RenderedFrame[] = []
    const add = (key: string, data: string): void => {
      const set = this.subscribers.get(key)
      if (set !== undefined && set.size > 0) out.push({ key, to: [...set], data })
    }
    const trades = this.pendingTrades
    this.pendingTrades = []
    for (const t of trades) {
      const { builder_fee: _omit, ...trade } = t
      add(`trades:${t.market_id}`, frame({ type: "trade", market_id: t.market_id, trade }))
    }
    const ts = this.exchange.journalMs()
    for (const marketId of this.dirtyMarkets) {
      const key = `book:${marketId}`
      if (this.subscribers.get(key)?.size) add(key, frame({ type: "book_update", market_id: marketId, snapshot: bookView(this.exchange, marketId, ts) }))
    }
    // A moved book is a portfolio update for its holders. Their state changed only where the
    // market's mark moved; a holder whose markets all kept their marks (and who had no event of
    // its own) is sent the text of its last update again instead of rebuilding it.
    const marks: MarkMemo = new Map()
    const reusable = new Set<string>()
    if (this.dirtyMarkets.size > 0) {
      const moved = this.portfolios.marksMoved(this.dirtyMarkets, marks)
      for (const user of this.liveUsers) {
        const positions = this.exchange.engine.accounts.get(user)?.positions
        if (positions === undefined || this.dirtyUsers.has(user)) continue
        let holds = false
        let rebuild = false
        for (const marketId of this.dirtyMarkets) {
          if (!positions.has(marketId)) continue
          holds = true
          if (moved.has(marketId)) {
            rebuild = true
            break
          }
        }
        if (!holds) continue
        this.dirtyUsers.add(user)
        if (!rebuild) reusable.add(user)
      }
    }
    this.dirtyMarkets.clear()
    for (const user of this.dirtyUsers) {
      const key = `user:${user}`
      if (this.subscribers.get(key)?.size) {
        const state = (reusable.has(user) ? this.portfolios.lastState(user) : null) ?? this.portfolios.state(user, marks)
        // frame({ type: "portfolio_update", user, ts, state }) with the state's JSON spliced in.
        add(key, `{"type":"portfolio_update","user":${frame(user)},"ts":${frame(ts)},"state":${state}}`)
      }
    }
    this.dirtyUsers.clear()
    return out
  }

  /**
   * Sends rendered frames to those subscribed both when they were rendered and now: a socket that
   * subscribed in between was seeded with newer state, and an older frame must not follow it.
   */
  deliver(frames: RenderedFrames): void {
    for (const f of frames) {
      const now = this.subscribers.get(f.key)
      if (now === undefined) continue
      for (const s of f.to) if (now.has(s)) this.send(s, f.data)
    }
  }
}

interface RenderedFrame {
  readonly key: string
  readonly to: ReadonlyArray<FeedSocket>
  readonly data: string
}

export type RenderedFrames = ReadonlyArray<RenderedFrame>
