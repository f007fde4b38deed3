// Commands from the gateways to the leader (docs/cluster.md "Gateways"): request/reply on the
// leader's own subject, `<base>.<term>` (NATS live: `NatsCommandBus`; in memory for tests). A
// gateway addresses the newest term its replica has read in the log, so a deposed leader — a
// paused process whose subscription NATS still holds — is never sent a newer term's commands. Chosen
// over a command stream: a command is answered by the leader that journals it, with its result,
// and while no leader serves the subject a request fails at once ("no responders") instead of
// queueing work for a leader that may never take it — the gateway answers 503 `not_leader` and the
// client retries. Nothing is lost by that: a command is acknowledged only by its reply.
//
// The wire: a request is `{ cmd }` (a ServiceCommand as JSON); a reply is `{ ok: true, seq, result }`
// or `{ ok: false, error: { code, detail?, retry_after? } }` (an ApiError the leader raised, such as
// `not_leader` from a deposed leader).
import type { NatsConnection, Subscription } from "@nats-io/transport-node"
import { ApiError, type ErrorCode } from "../domain/errors.ts"
import type { ServiceCommand } from "../service/commands.ts"
import type { ApplyResult } from "../service/exchange.ts"

export interface CommandBus {
  /** Sends one request to the leader of `term`; rejects with `NoLeader` when nobody serves it or no reply comes in time. */
  request(payload: string, timeoutMs: number, term: number): Promise<string>
  /** Serves the requests of `term` until `stop` (its leader only). */
  serve(term: number, handler: (payload: string) => Promise<string>): { stop(): Promise<void> }
}

/** Nobody answered: no leader serves commands now (a failover), or it did not answer in time. */
export class NoLeader extends Error {
  readonly _tag = "NoLeader"
}

export type CommandReply =
  | { readonly ok: true; readonly seq: number; readonly result: ApplyResult }
  | { readonly ok: false; readonly error: { readonly code: ErrorCode; readonly detail?: string; readonly retry_after?: number } }

export const encodeRequest = (cmd: ServiceCommand): string => JSON.stringify({ cmd })
export const decodeRequest = (payload: string): ServiceCommand => (JSON.parse(payload) as { cmd: ServiceCommand }).cmd
export const encodeReply = (reply: CommandReply): string => JSON.stringify(reply)
export const decodeReply = (payload: string): CommandReply => JSON.parse(payload) as CommandReply

export const replyOfError = (err: ApiError): CommandReply => ({
  ok: false,
  error: { code: err.code, ...(err.detail === undefined ? {} : { detail: err.detail }), ...(err.retryAfterSec === undefined ? {} : { retry_after: err.retryAfterSec }) }
})

export const errorOfReply = (e: Extract<CommandReply, { ok: false }>["error"]): ApiError => new ApiError(e.code, e.detail, e.retry_after)

/** The bus on NATS request/reply: `<subject>.<term>` served by that term's leader. */
export class NatsCommandBus implements CommandBus {
  private readonly encoder = new TextEncoder()
  private readonly decoder = new TextDecoder()

  constructor(
    private readonly nc: NatsConnection,
    private readonly subject: string
  ) {}

  async request(payload: string, timeoutMs: number, term: number): Promise<string> {
    const subject = `${this.subject}.${term}`
    try {
      const msg = await this.nc.request(subject, this.encoder.encode(payload), { timeout: timeoutMs })
      return this.decoder.decode(msg.data)
    } catch (err) {
      throw new NoLeader(`no leader answered the command subject ${subject}: ${err instanceof Error ? err.message : String(err)}`)
    }
  }

  serve(term: number, handler: (payload: string) => Promise<string>): { stop(): Promise<void> } {
    const sub: Subscription = this.nc.subscribe(`${this.subject}.${term}`, { queue: "leader" })
    const loop = (async () => {
      for await (const msg of sub) {
        // Each command on its own: the journal's group commit batches concurrent ones.
        void handler(this.decoder.decode(msg.data)).then((reply) => msg.respond(this.encoder.encode(reply)))
      }
    })()
    return {
      stop: async () => {
        sub.unsubscribe()
        await loop
      }
    }
  }
}

/** The bus inside one process (tests): a server per term, like the NATS subjects. */
export class MemoryCommandBus implements CommandBus {
  private readonly handlers = new Map<number, (payload: string) => Promise<string>>()

  request(payload: string, _timeoutMs: number, term: number): Promise<string> {
    const h = this.handlers.get(term)
    if (h === undefined) return Promise.reject(new NoLeader(`no leader serves the commands of term ${term}`))
    return h(payload)
  }

  serve(term: number, handler: (payload: string) => Promise<string>): { stop(): Promise<void> } {
    this.handlers.set(term, handler)
    return {
      stop: () => {
        if (this.handlers.get(term) === handler) this.handlers.delete(term)
        return Promise.resolve()
      }
    }
  }
}
