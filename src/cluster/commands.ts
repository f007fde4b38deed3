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

/** A gateway's CommandPort: the leader journals, the replica catches up, then the use case goes on. */
export const remoteCommands = (o: RemoteCommandsOptions): CommandPort => ({
  submit: async (cmd) => {
    let payload: string
    try {
      payload = await o.bus.request(encodeRequest(cmd), o.timeoutMs, o.term())
    } catch (err) {
      if (err instanceof NoLeader) throw notLeader(`no sequencer took the command (${err.message}); if it was a write, read before retrying: it may have been applied`)
      throw err
    }
    const reply = decodeReply(payload)
    if (!reply.ok) throw errorOfReply(reply.error)
    await o.applied(reply.seq)
    return { result: reply.result, seq: reply.seq }
  }
})
