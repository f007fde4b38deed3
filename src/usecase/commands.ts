// How a use case changes the ledger: it hands a command to the CommandPort and is answered once the
// command is durable and applied to the exchange this process reads. In one process (and on the
// cluster's leader) that is the exchange's own `submit`; on a cluster gateway it is a request to the
// leader, answered once the gateway's read replica has applied it (docs/cluster.md "Gateways"),
// so a use case's reads after the answer see its own command on every role.
import type { ServiceCommand } from "../service/commands.ts"
import type { ApplyResult, Exchange } from "../service/exchange.ts"

export interface Submitted {
  readonly result: ApplyResult
  /** The command's journal sequence number. */
  readonly seq: number
}

export interface CommandPort {
  /** Resolves once the command is durable and applied here; rejects as the journal does (an ApiError where the client should be told). */
  submit(cmd: ServiceCommand): Promise<Submitted>
}

/** The exchange's own journal: stamp, journal, apply now; answered once the journal holds it. */
export const localCommands = (x: Exchange): CommandPort => ({
  submit: (cmd) => {
    const { result, durable } = x.submit(cmd)
    const seq = x.lastSeq
    return durable.then(() => ({ result, seq }))
  }
})
