// Cluster suite (`npm run bench -- cluster`; docs/cluster.md): the roles as real processes
// (test/support/cluster-procs.ts) on three local nats-server nodes (R3, synced before every ack),
// against the single process (file journal) in the same run:
//   1. acknowledged-order latency, p50/p99, through a gateway vs the single process (ratio);
//   2. unavailability over K leader kills: from the leader's death to the first acknowledged order
//      among probes sent after it (p50/p99; the killed sequencer comes back as the next standby);
//   3. signed orders/s through 1 and 2 gateways, and CPU per order in a gateway and in the leader
//      (from /proc), with what three machines would carry by that profile.
// Everything shares this machine's two cores and one disk: the absolute figures are a floor; the
// CPU per order is what carries over. Orders keep to the API's limits (SPEC §8: 50 per user and
// 600 per address a minute): each user has its own loopback source address.
//
// Flags: --latency-orders=N  --kills=K  --users=N (per throughput round)  --orders-per-user=N
import { readFileSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ApiClient } from "../src/client/api-client.ts"
import { keyFromLabel } from "../src/client/keys.ts"
import { demoCatalog } from "../fixtures/catalog.ts"
import { loopbackTransport, startChildServer } from "../test/support/child-server.ts"
import { clusterEnv, type ClusterEnv, type RoleProcess, spawnRole, stopRole } from "../test/support/cluster-procs.ts"
import { startNatsCluster } from "../test/support/nats-cluster.ts"
import { numberFlag, percentile, round, type Suite, timeEach } from "./lib.ts"

const MARKET = demoCatalog()[0]!.slug
const TICKS_PER_SEC = 100 // USER_HZ on Linux

/** utime + stime of a process, in µs. */
const cpuMicros = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS_PER_SEC
}

let addressCounter = 10
/** A client of its own (user, loopback address) through whichever URL `target` names, registered and credited. */
const newClient = async (target: () => string, adminToken: string, label: string): Promise<ApiClient & { close(): void }> => {
  const n = addressCounter++
  const address = `127.0.${Math.floor(n / 250)}.${(n % 250) + 2}`
  const transport = loopbackTransport(address, target)
  const client = new ApiClient("http://server", keyFromLabel(label), transport)
  const reg = await client.register("bench")
  if (reg.status !== 200) throw new Error(`register: ${reg.status} ${JSON.stringify(reg.body)}`)
  const credit = await transport("http://server/v1/admin/credit", {
    method: "POST",
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ user: client.user, amount_micro: 1_000_000_000 })
  })
  if (credit.status !== 200) throw new Error(`credit: ${credit.status}`)
  return Object.assign(client, { close: () => transport.close() })
}

let priceStep = 0
const order = (c: ApiClient) => c.placeOrder({ market_id: MARKET, side: "buy", outcome: "yes", price: 1000 + (priceStep++ % 300) * 10, size: 1 })

/** Sequential orders from `clients` in turn; latency of each acknowledgement. */
const latencies = (clients: ApiClient[], count: number) =>
  timeEach(count, async (i) => {
    const res = await order(clients[i % clients.length]!)
    if (res.status !== 200) throw new Error(`order: ${res.status} ${JSON.stringify(res.body)}`)
  })

const singleProcessLatency = async (count: number, perUser: number) => {
  const dir = mkdtempSync(join(tmpdir(), "twinbook-bench-single-"))
  const server = await startChildServer({ dataDir: dir, env: { ADMIN_TOKEN: "bench-admin", LOG_LEVEL: "warn" } })
  try {
    const clients = await Promise.all(Array.from({ length: Math.ceil(count / perUser) }, (_, i) => newClient(() => server.url, "bench-admin", `bench-single-${i}-${dir}`)))
    const result = await latencies(clients, count)
    for (const c of clients) c.close()
    return result
  } finally {
    server.kill("SIGKILL")
    await server.exited
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Orders from every client at once (each sequential), through the given gateways in turn. */
const throughput = async (gateways: RoleProcess[], leader: RoleProcess, c: ClusterEnv, users: number, perUser: number, round_: string) => {
  const clients = await Promise.all(
    Array.from({ length: users }, (_, i) => {
      const gw = gateways[i % gateways.length]!
      return newClient(() => gw.url, c.adminToken, `bench-tp-${round_}-${i}-${c.sessionSecret.slice(0, 8)}`)
    })
  )
  const gwCpu0 = gateways.map((g) => cpuMicros(g.child.pid!))
  const seqCpu0 = cpuMicros(leader.child.pid!)
  const t0 = performance.now()
  let failed = 0
  await Promise.all(
    clients.map(async (cl) => {
      for (let i = 0; i < perUser; i++) if ((await order(cl)).status !== 200) failed++
    })
  )
  const seconds = (performance.now() - t0) / 1000
  const orders = users * perUser
  const gwCpuUs = gateways.reduce((s, g, i) => s + cpuMicros(g.child.pid!) - gwCpu0[i]!, 0)
  const seqCpuUs = cpuMicros(leader.child.pid!) - seqCpu0
  for (const cl of clients) cl.close()
  return { ordersPerSec: Math.round(orders / seconds), orders, failed, gatewayCpuUsPerOrder: Math.round(gwCpuUs / orders), sequencerCpuUsPerOrder: Math.round(seqCpuUs / orders) }
}

/** Kills the leader `kills` times; each time, the time to the first acknowledged order sent after its death. */
const unavailability = async (c: ClusterEnv, first: RoleProcess, second: RoleProcess, gw: RoleProcess, kills: number, log: (m: string) => void) => {
  const probes = await Promise.all(Array.from({ length: 4 }, (_, i) => newClient(() => gw.url, c.adminToken, `bench-probe-${i}-${c.sessionSecret.slice(0, 8)}`)))
  let leader = first
  let standby = second
  const gaps: number[] = []
  for (let k = 0; k < kills; k++) {
    leader.signal("SIGKILL")
    await leader.exited
    const deathMs = performance.now()
    // Probes fire every 50 ms, each on its own (none waits for an earlier one's answer).
    const acked = await new Promise<number>((resolve) => {
      let done = false
      let i = 0
      const fire = (): void => {
        if (done) return
        const probe = probes[i++ % probes.length]!
        void probe.syncNonces().then(() => order(probe)).then(
          (res) => {
            if (res.status === 200 && !done) {
              done = true
              resolve(performance.now())
            }
          },
          () => {}
        )
        setTimeout(fire, 50)
      }
      fire()
    })
    gaps.push(acked - deathMs)
    log(`kill ${k + 1}/${kills}: first order acknowledged ${Math.round(acked - deathMs)} ms after the leader's death`)
    // The killed sequencer comes back as the next standby.
    const revived = await spawnRole("sequencer", `${leader.name}-${k}`, c)
    await revived.waitLog("standby", (l) => l.msg === "standby")
    leader = standby
    standby = revived
  }
  for (const p of probes) p.close()
  const sorted = Float64Array.from(gaps).sort()
  return { leader, standby, p50Ms: Math.round(percentile(sorted, 50)), p99Ms: Math.round(percentile(sorted, 99)), maxMs: Math.round(sorted[sorted.length - 1]!) }
}

export const clusterSuite: Suite = async ({ args, report, log }) => {
  const latencyOrders = numberFlag(args, "latency-orders", 200)
  const kills = numberFlag(args, "kills", 10)
  const users = numberFlag(args, "users", 40)
  const perUser = numberFlag(args, "orders-per-user", 40)
  log("single process (file journal): sequential orders")
  const single = await singleProcessLatency(latencyOrders, 40)
  const nats = await startNatsCluster(3)
  const procs: RoleProcess[] = []
  try {
    const c = clusterEnv(nats.urls, 3, 2_000)
    const spawn = async (r: "sequencer" | "gateway", name: string) => {
      const p = await spawnRole(r, name, c, { LOG_LEVEL: "warn" })
      procs.push(p)
      return p
    }
    const a = await spawn("sequencer", "seq-a")
    await a.waitOut("leading", (l) => l.startsWith("twinbook leader"))
    const b = await spawn("sequencer", "seq-b")
    await b.waitOut("its start line", (l) => l.startsWith("twinbook sequencer"))
    const g1 = await spawn("gateway", "gw-1")
    const g2 = await spawn("gateway", "gw-2")
    for (const g of [g1, g2]) await g.waitOut("its URL", (l) => l.startsWith("twinbook API"))
    log("cluster (JetStream R3, through a gateway): sequential orders")
    const latencyClients = await Promise.all(Array.from({ length: Math.ceil(latencyOrders / 40) }, (_, i) => newClient(() => g1.url, c.adminToken, `bench-lat-${i}-${c.sessionSecret.slice(0, 8)}`)))
    const viaGateway = await latencies(latencyClients, latencyOrders)
    for (const cl of latencyClients) cl.close()
    report({
      name: "cluster.order_latency",
      orders: latencyOrders,
      single_p50_ms: single.p50Ms,
      single_p99_ms: single.p99Ms,
      gateway_r3_p50_ms: viaGateway.p50Ms,
      gateway_r3_p99_ms: viaGateway.p99Ms,
      ratio_p50: round(viaGateway.p50Ms / single.p50Ms, 2),
      ratio_p99: round(viaGateway.p99Ms / single.p99Ms, 2)
    })
    log(`throughput: ${users} users × ${perUser} orders through 1 gateway, then 2`)
    const one = await throughput([g1], a, c, users, perUser, "one")
    const two = await throughput([g1, g2], a, c, users, perUser, "two")
    // By the CPU profile: a gateway per machine on 2 cores each, the sequencer on one core of its own.
    const perGatewayMachine = Math.round((2 * 1e6) / Math.max(1, two.gatewayCpuUsPerOrder))
    const sequencerCeiling = Math.round(1e6 / Math.max(1, two.sequencerCpuUsPerOrder))
    report({
      name: "cluster.throughput",
      one_gateway_orders_per_sec: one.ordersPerSec,
      two_gateways_orders_per_sec: two.ordersPerSec,
      failed: one.failed + two.failed,
      gateway_cpu_us_per_order: two.gatewayCpuUsPerOrder,
      sequencer_cpu_us_per_order: two.sequencerCpuUsPerOrder,
      projected_3_machines_orders_per_sec: Math.min(3 * perGatewayMachine, sequencerCeiling),
      projected_gateway_machine_orders_per_sec: perGatewayMachine,
      projected_sequencer_ceiling_orders_per_sec: sequencerCeiling
    })
    log(`unavailability over ${kills} leader kills`)
    const u = await unavailability(c, a, b, g1, kills, log)
    procs.push(u.leader, u.standby)
    report({ name: "cluster.failover", kills, unavailable_p50_ms: u.p50Ms, unavailable_p99_ms: u.p99Ms, unavailable_max_ms: u.maxMs, lease_ttl_ms: c.leaseTtlMs, goal_p99_ms: 5_000, meets_goal: u.p99Ms <= 5_000 })
  } finally {
    await Promise.all(procs.map((p) => stopRole(p)))
    await nats.close()
  }
}
