// Simulated WebSocket connections into the same feed hub the live server uses.
// Frames arrive in order (as over TCP), each after a seeded latency; what is sent
// and not yet delivered counts as buffered, so the hub's slow-consumer rule applies.
import type { FeedHub, FeedSocket } from "../../src/feed/hub.ts"
import type { Scheduler } from "./scheduler.ts"

export interface SimWsHandlers {
  /** The frame's JSON text, as a WebSocket client receives it. */
  onFrame(frame: string): void
  onClose(code: number, reason: string): void
}

export class SimWs {
  private open = true
  private buffered = 0
  private lastDeliveryMs = 0
  private lastUpMs = 0
  private inFlight: string[] | null = null
  readonly server: FeedSocket

  constructor(
    private readonly hub: FeedHub,
    private readonly scheduler: Scheduler,
    private readonly latencyMs: () => number,
    cookieUser: string | null,
    private readonly handlers: SimWsHandlers
  ) {
    this.server = {
      cookieUser,
      send: (frame) => this.deliver(frame),
      bufferedBytes: () => this.buffered,
      close: (code, reason) => this.closeBy(code, reason)
    }
    hub.connect(this.server)
  }

  get isOpen(): boolean {
    return this.open
  }

  /** Client → server, in order. */
  send(message: unknown): void {
    if (!this.open) return
    const text = JSON.stringify(message)
    const at = Math.max(this.lastUpMs, this.scheduler.nowMs() + this.latencyMs())
    this.lastUpMs = at
    this.scheduler.at(at, () => {
      if (this.open) this.hub.onMessage(this.server, text)
    })
  }

  /** The connection drops (client side, network, or a crashed server). */
  drop(code = 1006, reason = "connection lost"): void {
    this.closeBy(code, reason)
  }

  /**
   * Frames sent while an earlier batch is still in flight join it (as bytes queue behind
   * each other on one TCP stream): one scheduler event per batch, frames in order.
   */
  private deliver(frame: string): void {
    if (!this.open) return
    this.buffered += frame.length
    if (this.inFlight !== null) {
      this.inFlight.push(frame)
      return
    }
    const batch = [frame]
    this.inFlight = batch
    const at = Math.max(this.lastDeliveryMs, this.scheduler.nowMs() + this.latencyMs())
    this.lastDeliveryMs = at
    this.scheduler.at(
      at,
      () => {
        this.inFlight = null
        for (const f of batch) {
          this.buffered -= f.length
          if (!this.open) continue
          this.handlers.onFrame(f)
        }
      },
      true
    )
  }

  private closeBy(code: number, reason: string): void {
    if (!this.open) return
    this.open = false
    this.hub.disconnect(this.server)
    this.scheduler.after(0, () => this.handlers.onClose(code, reason))
  }
}
