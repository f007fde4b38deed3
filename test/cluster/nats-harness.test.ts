// The test harness's own NATS (test/support/nats-cluster.ts): three real nats-server 2.10 nodes
// with `sync_interval: always` form a JetStream cluster; an R3 stream takes a write with its
// expected last sequence and refuses one with a stale expectation (the fencing rule twinbook's
// journal builds on); with one node SIGKILLed a quorum of two still acknowledges, and the node
// rejoins with what it missed.
import { jetstream, jetstreamManager } from "@nats-io/jetstream"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { goDurationMs, metaLeaderHeardFromMs, type NatsCluster, raftViews, startNatsCluster } from "../support/nats-cluster.ts"

let c: NatsCluster
beforeAll(async () => {
  c = await startNatsCluster(3)
}, 120_000)
afterAll(() => c?.close())

describe("the NATS test cluster", () => {
  it("an R3 stream fences on the expected last sequence and survives one node down", async () => {
    const nc = await c.connect()
    const jsm = await jetstreamManager(nc)
    await jsm.streams.add({ name: "HARNESS", subjects: ["harness.>"], num_replicas: 3 })
    const js = jetstream(nc)
    const a = await js.publish("harness.x", "one", { expect: { lastSequence: 0 } })
    expect(a.seq).toBe(1)
    await expect(js.publish("harness.x", "stale", { expect: { lastSequence: 0 } })).rejects.toThrow(/wrong last sequence/)
    // Each node's own view of its Raft groups (what a failed wait prints): the meta group and the
    // stream's, which exactly one node leads.
    const views = (await raftViews(c)).split("\n")
    expect(views.map((v) => v.slice(0, 3))).toEqual(["n1:", "n2:", "n3:"])
    for (const v of views) expect(v).toMatch(/"_meta_":\{"state":"(LEADER|FOLLOWER)"/)
    expect(views.filter((v) => /"S-R3F-[^"]+":\{"state":"LEADER"/.test(v))).toHaveLength(1)
    // The meta leader hears from every follower about once a second (what a restart is judged by).
    for (const n of c.nodes) {
      const ago = await metaLeaderHeardFromMs(c, n.name)
      if (!views.some((v) => v.startsWith(`${n.name}: {"_meta_":{"state":"LEADER"`))) expect(ago, n.name).toBeLessThan(3_000)
    }
    expect([goDurationMs("772.49ms"), goDurationMs("4.5s"), goDurationMs("5m0.5s"), goDurationMs("1h2m3s"), goDurationMs("12µs"), goDurationMs("soon")]).toEqual([772.49, 4_500, 300_500, 3_723_000, 0.012, null])
    await c.kill(2)
    expect((await raftViews(c)).split("\n")[2]).toBe("n3: down")
    // Right after a node dies the cluster may be moving its JetStream leaders: a publish can fail
    // for a moment ("jetstream is not enabled", a timeout). Retried with one message id, a publish
    // that did land is answered as a duplicate with its first sequence, never stored twice.
    let b: { seq: number } | null = null
    for (let attempt = 0; b === null; attempt++) {
      try {
        b = await js.publish("harness.x", "two", { msgID: "two", expect: { lastSequence: 1 } })
      } catch (err) {
        if (attempt > 200) throw err
        await new Promise((r) => setTimeout(r, 50))
      }
    }
    expect(b.seq).toBe(2)
    await c.restart(2)
    expect((await jsm.streams.info("HARNESS")).state.messages).toBe(2)
  }, 120_000)
})
