// A frame-collecting WebSocket test client (`ws`): every server frame is kept
// in arrival order; `next(predicate)` takes the first unconsumed matching frame
// (waiting for it if needed), and `barrier()` is a ping/pong round trip, after
// which every frame the server wrote before handling the ping has arrived.
import { WebSocket } from "ws"

export type Frame = Record<string, any>
export type FramePredicate = (frame: Frame) => boolean

interface Waiter {
  readonly predicate: FramePredicate
  readonly resolve: (frame: Frame) => void
}

export class WsClient {
  /** Every frame received, in order (consumed or not). */
  readonly frames: Frame[] = []
  /** Text frames that were not JSON (the server should never send any). */
  readonly garbage: string[] = []
  /** Resolves when the socket closes, with the close code and reason. */
  readonly closed: Promise<{ code: number; reason: string }>
  private readonly unconsumed: Frame[] = []
  private readonly waiters = new Set<Waiter>()

  private constructor(readonly ws: WebSocket) {
    ws.on("message", (data) => {
      const text = data.toString()
      let frame: Frame
      try {
        frame = JSON.parse(text) as Frame
      } catch {
        this.garbage.push(text)
        return
      }
      this.frames.push(frame)
      for (const w of this.waiters) {
        if (w.predicate(frame)) {
          this.waiters.delete(w)
          w.resolve(frame)
          return
        }
      }
      this.unconsumed.push(frame)
    })
    this.closed = new Promise((resolve) => ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() })))
  }

  /** Opens a socket (optionally with a Cookie header, an Origin, a source address) and waits until it is open. */
  static open(url: string, cookie?: string | null, origin?: string, localAddress?: string): Promise<WsClient> {
    const headers: Record<string, string> = {}
    if (cookie != null) headers.cookie = cookie
    if (origin !== undefined) headers.origin = origin
    // A loopback source address other than 127.0.0.1 is another client address to the server.
    const ws = new WebSocket(url, { headers, ...(localAddress === undefined ? {} : { localAddress }) })
    const client = new WsClient(ws)
    return new Promise((resolve, reject) => {
      ws.once("open", () => resolve(client))
      ws.once("error", reject)
    })
  }

  send(frame: unknown): void {
    this.ws.send(typeof frame === "string" ? frame : JSON.stringify(frame))
  }

  /** Takes the first not-yet-taken frame matching `predicate`, waiting up to `timeoutMs` for it. */
  next(predicate: FramePredicate = () => true, timeoutMs = 5_000): Promise<Frame> {
    const i = this.unconsumed.findIndex(predicate)
    if (i >= 0) return Promise.resolve(this.unconsumed.splice(i, 1)[0]!)
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        predicate,
        resolve: (frame) => {
          clearTimeout(timer)
          resolve(frame)
        }
      }
      const timer = setTimeout(() => {
        this.waiters.delete(waiter)
        reject(new Error(`no matching frame within ${timeoutMs} ms; received: ${JSON.stringify(this.frames).slice(-2_000)}`))
      }, timeoutMs)
      this.waiters.add(waiter)
    })
  }

  /** Takes the next frame of `type` (optionally also matching `predicate`). */
  nextOf(type: string, predicate: FramePredicate = () => true, timeoutMs?: number): Promise<Frame> {
    return this.next((f) => f.type === type && predicate(f), timeoutMs)
  }

  /** Sends a frame and takes the first reply matching `predicate`. */
  request(frame: unknown, predicate: FramePredicate, timeoutMs?: number): Promise<Frame> {
    const reply = this.next(predicate, timeoutMs)
    this.send(frame)
    return reply
  }

  /** Subscribes and waits for the `subscribed` reply. */
  subscribe(channel: string, extra: Record<string, unknown> = {}): Promise<Frame> {
    return this.request({ type: "subscribe", channel, ...extra }, (f) => f.type === "subscribed" && f.channel === channel)
  }

  /** A ping/pong round trip: afterwards every frame sent to this socket before the ping has arrived. */
  async barrier(): Promise<Frame> {
    return this.request({ type: "ping" }, (f) => f.type === "pong")
  }

  /** Frames received at or after index `from` of `frames` that match `predicate`. */
  since(from: number, predicate: FramePredicate = () => true): Frame[] {
    return this.frames.slice(from).filter(predicate)
  }

  close(): Promise<{ code: number; reason: string }> {
    if (this.ws.readyState !== WebSocket.CLOSED) this.ws.close()
    return this.closed
  }
}
