// Both ends of the gateways' command path (./command-bus.ts). The leader answers each request
// with its own CommandPort — journaled, applied, then the reply with the command's sequence
// number and result. A gateway's CommandPort sends the request and answers its use case once
// its read replica has applied that sequence number, so the use case's own reads, and the
// client's next reads through this gateway, see the command (read-your-writes).
import { ApiError } from "../domain/errors.ts"
import type { CommandPort } from "../usecase/commands.ts"
import { type CommandBus, decodeReply, decodeRequest, encodeReply, encodeRequest, errorOfReply, NoLeader, replyOfError } from "./command-bus.ts"
import { notLeader } from "./sequencer.ts"

/** The leader's side: serves its term's commands with `port`, unless `gate` refuses (a deposed leader says so). */
export const serveCommands = (bus: CommandBus, term: number, port: CommandPort, gate: () => ApiError | null): { stop(): Promise<void> } =>
  bus.serve(term, async (payload) => {
    const refusal = gate()
    if (refusal !== null) return encodeReply(replyOfError(refusal))
    try {
      const { result, seq } = await port.submit(decodeRequest(payload))
      return encodeReply({ ok: true, seq, result })
    } catch (err) {
      const apiError = err instanceof ApiError ? err : new ApiError("internal_error", `the leader failed the command: ${err instanceof Error ? err.message : String(err)}`)
      return encodeReply(replyOfError(apiError))
    }
  })

export interface RemoteCommandsOptions {
  readonly bus: CommandBus
  /** The newest term the replica has read in the log: whose leader is asked. */
  readonly term: () => number
  /** Resolves once the replica has applied `seq`. */
  readonly applied: (seq: number) => Promise<void>
  /** How long a request may go unanswered: past it the outcome is unknown (503, check before retrying). */
  readonly timeoutMs: number
}

/** A gateway's CommandPort, told when its replica reads a newer term (`termRead`). */
export interface RemoteCommands extends CommandPort {
  /**
   * The replica applied a batch of `term`: requests still waiting on an older term's leader are
   * answered 503 at once. That leader can append nothing after the new term's marker (the fence),
   * so no answer is coming; whatever it did append before is in the log, hence "read before retrying".
   */
  termRead(term: number): void
}

/** A gateway's CommandPort: the leader journals, the replica catches up, then the use case goes on. */
export const remoteCommands = (o: RemoteCommandsOptions): RemoteCommands => {
  const waiting = new Set<{ readonly term: number; readonly abandon: (err: ApiError) => void }>()
  return {
    termRead: (term) => {
      for (const w of waiting) {
        if (w.term >= term) continue
        waiting.delete(w)
        w.abandon(notLeader(`the leader of term ${w.term} was replaced (term ${term}) before it answered; if it was a write, read before retrying: it may have been applied`))
      }
    },
    submit: async (cmd) => {
      const term = o.term()
      let entry: { readonly term: number; readonly abandon: (err: ApiError) => void } | null = null
      const abandoned = new Promise<never>((_, reject) => {
        entry = { term, abandon: reject }
        waiting.add(entry)
      })
      let payload: string
      try {
        payload = await Promise.race([o.bus.request(encodeRequest(cmd), o.timeoutMs, term), abandoned])
      } catch (err) {
        if (err instanceof NoLeader) throw notLeader(`no sequencer took the command (${err.message}); if it was a write, read before retrying: it may have been applied`)
        throw err
      } finally {
        waiting.delete(entry!)
      }
      const reply = decodeReply(payload)
      if (!reply.ok) throw errorOfReply(reply.error)
      await o.applied(reply.seq)
      return { result: reply.result, seq: reply.seq }
    }
  }
}
