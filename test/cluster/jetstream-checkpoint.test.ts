// The chain guard's checkpoint in cluster mode (src/cluster/jetstream-checkpoint.ts) on a real
// nats-server: what one leadership saved is what the next one loads, and a deposed term cannot
// move it once a newer term wrote it.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CheckpointTaken, openJetStreamCheckpoints } from "../../src/cluster/jetstream-checkpoint.ts"
import type { Checkpoint } from "../../src/service/chain-guard-port.ts"
import { type NatsCluster, startNatsCluster } from "../support/nats-cluster.ts"

let c: NatsCluster
beforeAll(async () => {
  c = await startNatsCluster(1)
}, 120_000)
afterAll(() => c?.close())

const at = (n: number): Checkpoint => ({ blockNumber: BigInt(n), hash: `0x${n.toString(16).padStart(64, "0")}` })

describe("the chain checkpoint on JetStream KV", () => {
  it("is carried from one term to the next, and a deposed term cannot move it", async () => {
    const nc = await c.connect()
    const checkpoints = await openJetStreamCheckpoints(nc, { replicas: 1 })
    // Opened again (the other sequencer at its start): the same bucket, nothing lost.
    const again = await openJetStreamCheckpoints(nc, { replicas: 1 })

    const first = await checkpoints.forTerm(3, "seq-a")
    expect(first.load()).toBeNull()
    await first.save(at(10))
    await first.save(at(12))

    const second = await again.forTerm(7, "seq-b")
    expect(second.load()).toEqual(at(12))
    await second.save(at(15))
    // The deposed term's guard, still polling: refused, the newer term's checkpoint stands.
    await expect(first.save(at(20))).rejects.toBeInstanceOf(CheckpointTaken)
    expect((await checkpoints.forTerm(8, "seq-a")).load()).toEqual(at(15))
  }, 120_000)
})
