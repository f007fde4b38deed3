// A gateway's command port (src/cluster/commands.ts): a command waiting on a leader that was
// replaced is answered 503 not_leader as soon as the replica reads the new term, not after the
// command timeout; a command of the current term keeps waiting for its answer.
import { describe, expect, it } from "vitest"
import { MemoryCommandBus, encodeReply } from "../../src/cluster/command-bus.ts"
import { remoteCommands } from "../../src/cluster/commands.ts"
import { ApiError } from "../../src/domain/errors.ts"
import type { ServiceCommand } from "../../src/service/commands.ts"

const cmd = { type: "credit", user: "u", amountMicro: 1 } as unknown as ServiceCommand

describe("a gateway's command port", () => {
  it("answers the commands of a replaced term at once when the replica reads a newer term, and only those", async () => {
    const bus = new MemoryCommandBus()
    // The leader of term 1 took the command and died: no answer ever comes.
    bus.serve(1, () => new Promise<string>(() => {}))
    let release: (reply: string) => void = () => {}
    bus.serve(2, () => new Promise<string>((resolve) => void (release = resolve)))
    let term = 1
    const port = remoteCommands({ bus, term: () => term, timeoutMs: 3_600_000, applied: () => Promise.resolve() })
    const stranded = port.submit(cmd)
    term = 2
    const current = port.submit(cmd)
    port.termRead(1)
    port.termRead(2)
    const err = await stranded.catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ApiError)
    expect(err).toMatchObject({ code: "not_leader" })
    expect((err as ApiError).detail).toContain("read before retrying")
    // Term 2's command is still waiting for its own leader, who answers.
    release(encodeReply({ ok: true, seq: 7, result: { events: [] } as never }))
    expect(await current).toMatchObject({ seq: 7 })
  })
})
