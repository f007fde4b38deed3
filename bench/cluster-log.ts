// Cluster log suite (`npm run bench -- cluster-log`): what one durable batch costs on the
// replicated journal (src/cluster/jetstream-log.ts) against the file journal's durable write
// (src/store/file-journal.ts, one fdatasync per group-committed batch), one batch in flight at a
// time as the leader's journal appends them. JetStream runs as the tests run it: nats-server
// 2.10.27 on loopback with `sync_interval: always` (every node fsyncs before acknowledging), three
// nodes (R3: acknowledged once two stored it) and one (R1). All on this one machine: its disk and
// its two cores are shared by the three servers, so R3 here pays three fsyncs on one disk where a
// real deployment pays one per machine in parallel, plus a network round trip. Also the lease's
// renewal (a compare-and-set on the R3 KV bucket).
//
// Flags: --samples=N (batches per size; the largest size takes a fifth)
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { openJetStreamLease } from "../src/cluster/jetstream-lease.ts"
import { openJetStreamLog } from "../src/cluster/jetstream-log.ts"
import type { LogBatch } from "../src/cluster/ports.ts"
import { openJournal } from "../src/store/file-journal.ts"
import { batchOf, framesOf } from "../test/support/log-batches.ts"
import { startNatsCluster } from "../test/support/nats-cluster.ts"
import { numberFlag, round, type Suite, timeEach } from "./lib.ts"

const SIZES = [1, 64, 1_024] as const

interface Latencies {
  readonly p50Ms: number
  readonly p99Ms: number
}

const time = timeEach

const batches = (records: number, count: number): LogBatch[] => Array.from({ length: count }, (_, i) => batchOf(1, "bench", 1 + i * records, records))

const fileJournal = async (records: number, count: number): Promise<Latencies> => {
  const dir = mkdtempSync(join(tmpdir(), "twinbook-bench-journal-"))
  try {
    const journal = await openJournal(join(dir, "journal"), 1, (err) => {
      throw err
    })
    const all = batches(records, count)
    // A batch is durable when its last record is: the writer group-commits what was appended in one turn.
    const result = await time(count, async (i) => {
      const appended = all[i]!.records.map((r) => journal.append(r))
      await appended[appended.length - 1]
    })
    await journal.close()
    return result
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const replicated = async (size: 1 | 3, records: number, count: number): Promise<Latencies> => {
  const cluster = await startNatsCluster(size)
  try {
    const log = await openJetStreamLog(await cluster.connect(), { stream: "BENCH", subject: "bench.journal", replicas: size })
    const all = batches(records, count)
    let last = 0
    // Warm the connection and the stream leader.
    last = await log.append({ term: 1, holder: "bench", records: [] }, last)
    return await time(count, async (i) => {
      last = await log.append(all[i]!, last)
    })
  } finally {
    await cluster.close()
  }
}

const leaseRenewal = async (count: number): Promise<Latencies> => {
  const cluster = await startNatsCluster(3)
  try {
    const lease = await openJetStreamLease(await cluster.connect(), () => performance.now(), { bucket: "bench_lease", ttlMs: 60_000 })
    let held = (await lease.acquire("bench"))!
    return await time(count, async () => {
      held = (await lease.renew(held))!
    })
  } finally {
    await cluster.close()
  }
}

export const clusterLogSuite: Suite = async ({ args, report, log }) => {
  const samples = numberFlag(args, "samples", 300)
  for (const records of SIZES) {
    const count = records >= 1_024 ? Math.max(20, Math.floor(samples / 5)) : samples
    const bytes = framesOf(batchOf(1, "bench", 1, records)).length
    log(`batches of ${records} records (${bytes} bytes): file journal`)
    const file = await fileJournal(records, count)
    log(`batches of ${records} records: JetStream R1`)
    const r1 = await replicated(1, records, count)
    log(`batches of ${records} records: JetStream R3`)
    const r3 = await replicated(3, records, count)
    report({
      name: `cluster_log.append_${records}`,
      batch_records: records,
      batch_bytes: bytes,
      batches: count,
      file_p50_ms: file.p50Ms,
      file_p99_ms: file.p99Ms,
      r1_p50_ms: r1.p50Ms,
      r1_p99_ms: r1.p99Ms,
      r3_p50_ms: r3.p50Ms,
      r3_p99_ms: r3.p99Ms,
      r3_over_file_p50: round(r3.p50Ms / file.p50Ms, 2),
      r3_over_file_p99: round(r3.p99Ms / file.p99Ms, 2)
    })
  }
  log("lease renewals (R3 KV compare-and-set)")
  const renew = await leaseRenewal(samples)
  report({ name: "cluster_log.lease_renew", renewals: samples, p50_ms: renew.p50Ms, p99_ms: renew.p99Ms })
}
