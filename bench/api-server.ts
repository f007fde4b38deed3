// The service as the API bench's server, alone in its own process (one core
// for it, one for the load generator). Prints its port on stdout when ready.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { demoCatalog } from "../fixtures/catalog.ts"
import { inlineVerifier, workerVerifier } from "../src/auth/verifier.ts"
import { startService } from "../src/runtime/boot.ts"

export const BENCH_ADMIN_TOKEN = "bench-admin-token"

// Durable like the live service (journal: one O_DSYNC write per batch) unless BENCH_DURABLE=0.
const dataDir = process.env.BENCH_DURABLE === "0" ? undefined : mkdtempSync(join(tmpdir(), "twinbook-api-bench-"))
const service = await startService({
  host: "127.0.0.1",
  port: 0,
  secret: new Uint8Array(32).fill(3),
  catalog: demoCatalog(),
  config: {
    adminToken: BENCH_ADMIN_TOKEN,
    corsOrigins: new Set(),
    secureCookies: false,
    devCredit: true,
    rewards: { dailyBudgetMicro: 1_000_000_000, bandSpreadBpsMax: 300, perWalletCapPct: 40 },
    // The load comes from one address: 1,000 sockets of the fan-out bench would pass the per-address cap.
    limits: { wsConnectionsPerAddress: 100_000, registrationsPerMinute: 100_000 }
  }
}, {
  ...(dataDir === undefined ? {} : { dataDir }),
  nowMs: () => Date.now(), // live-only: the bench measures wall-clock latency
  verifier: Number(process.env.VERIFY_WORKERS ?? 1) > 0 ? workerVerifier(Number(process.env.VERIFY_WORKERS ?? 1)) : inlineVerifier()
})
// The per-wallet and per-IP limits would cap a load test from one address at 600/min.
const limiter = service.ctx.limiter as unknown as { take: () => void }
limiter.take = () => {}
process.stdout.write(`${service.http.port}\n`)
process.on("SIGTERM", () =>
  void service.close().then(() => {
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true })
    process.exit(0)
  })
)
