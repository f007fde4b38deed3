// GET /v1/health and GET /v1/ready on the real service (startService, loopback HTTP, a temp
// DATA_DIR) following a real Anvil as its external chain: ready while the chain answers and
// the watcher keeps up; 503 naming the chain when Anvil is stopped (by PID) or when the watcher
// falls behind by more than the bound; ready again once Anvil is back on the same port with its
// saved state; 503 naming the journal while DATA_DIR takes no new file. Anvil is stopped by PID;
// afterAll proves none is left.
import { execFileSync } from "node:child_process"
import { chmodSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Anvil, processAlive, startAnvil } from "../../src/chain/anvil.ts"
import { saveAnvilState } from "../../src/chain/live.ts"
import { makeLogger } from "../../src/ops/log.ts"
import { type Service, startService } from "../../src/runtime/boot.ts"
import { declaredApi } from "../../src/api/declaration/api.ts"
import { conformingFetch } from "../support/conformance.ts"
import { type AnvilChain, anvilProcessesOn, startAnvilChain } from "../support/anvil-chain.ts"

const T0_MS = 1_795_305_600_000
const MAX_LAG = 5
let t: AnvilChain
let restarted: Anvil | null = null
let dataDir: string
let service: Service
let checked: typeof fetch
/** The service's log lines (JSON, debug and up). */
const logLines: Array<Record<string, unknown>> = []

const config = {
  adminToken: "health-admin-token",
  corsOrigins: new Set<string>(),
  secureCookies: false,
  devCredit: true,
  rewards: { dailyBudgetMicro: 1_000_000_000, bandSpreadBpsMax: 300, perWalletCapPct: 40 }
}

beforeAll(async () => {
  t = await startAnvilChain()
  dataDir = mkdtempSync(join(tmpdir(), "twinbook-health-"))
  service = await startService({
    host: "127.0.0.1",
    port: 0,
    secret: new Uint8Array(32).fill(5),
    historyFlushMs: 0,
    lpTickMs: 0,
    config,
    ops: { maxLagBlocks: MAX_LAG, probeTimeoutMs: 2_000 },
    chain: { host: "127.0.0.1", depositPort: 0, confirmations: 0, pollMs: 0, minUsdgMicro: 1_000_000, maxPerTxMicro: 100_000_000, corsOrigins: new Set() }
  }, {
    nowMs: () => T0_MS,
    dataDir,
    logger: makeLogger({ level: "debug", format: "json", nowMs: () => T0_MS, write: (l) => void logLines.push(JSON.parse(l) as Record<string, unknown>) }),
    chain: t.chain
  })
  // Every answer is checked against the API declaration (src/api/declaration/ops.ts).
  checked = conformingFetch(declaredApi(), service.http.url)
}, 120_000)

afterAll(async () => {
  try {
    await service?.close()
  } finally {
    rmSync(dataDir, { force: true, recursive: true })
    const anvils = [t?.anvil, restarted].filter((a): a is Anvil => a !== undefined && a !== null)
    for (const a of anvils) await a.stop()
    for (const a of anvils) {
      expect(processAlive(a.pid)).toBe(false)
      expect(anvilProcessesOn(a.port)).toEqual([])
    }
  }
})

const ready = async (): Promise<{ status: number; body: any }> => {
  const res = await checked(`${service.http.url}/v1/ready`)
  return { status: res.status, body: await res.json() }
}

describe("GET /v1/health", () => {
  it("answers 200 { status: ok } while the process runs, whatever the chain does", async () => {
    const res = await checked(`${service.http.url}/v1/health`)
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ status: "ok" })
  })
})

describe("GET /v1/ready", () => {
  it("is not ready before the deposit watcher's first pass, however close the head: the chain guard has not checked the chain yet", async () => {
    // A fresh chain's head is within MAX_LAG of block 0, so the lag alone would have said ready
    // (a restored backup then answered 200, and 503 once the guard halted on its first pass).
    const head = await t.public.getBlockNumber()
    expect(Number(head) + 1).toBeLessThanOrEqual(MAX_LAG)
    const before = await ready()
    expect(before.status).toBe(503)
    expect(before.body.checks.chain).toEqual({ ok: false, detail: `head ${head}; the deposit watcher's first pass (the chain guard's first check) has not finished` })
  })

  it("is ready once the watcher has scanned to the head: journal, chain and deposit service each say why", async () => {
    await service.chainServices!.poll()
    const after = await ready()
    expect(after.status).toBe(200)
    expect(after.body).toEqual({
      status: "ready",
      checks: {
        journal: { ok: true, detail: "writable" },
        history: { ok: true, detail: "writing" },
        chain: { ok: true, detail: expect.stringMatching(/^head \d+, watcher 0 blocks behind$/) },
        deposit_service: { ok: true, detail: "listening" }
      }
    })
  })

  it("turns not-ready when the watcher falls more than READY_MAX_LAG_BLOCKS behind, and ready after a pass", async () => {
    const from = logLines.length
    await t.test.mine({ blocks: MAX_LAG + 1 })
    const behind = await ready()
    expect(behind.status).toBe(503)
    expect(behind.body.detail).toBe(`chain: watcher ${MAX_LAG + 1} blocks behind head ${await t.public.getBlockNumber()} (max ${MAX_LAG})`)
    // An orchestrator keeps probing: every probe fails, and the log says so once, at warn.
    for (let i = 0; i < 4; i++) expect((await ready()).status).toBe(503)
    const failing = logLines.slice(from)
    expect(failing.filter((l) => l.msg === "not ready")).toEqual([expect.objectContaining({ level: "warn", failing: "chain", detail: behind.body.detail })])
    expect(failing.filter((l) => l.level === "error")).toEqual([])
    const probes = failing.filter((l) => l.msg === "request" && l.route === "/v1/ready")
    expect(probes).toHaveLength(5)
    for (const p of probes) expect(p).toMatchObject({ level: "debug", status: 503 })

    await service.chainServices!.poll()
    for (let i = 0; i < 3; i++) expect((await ready()).status).toBe(200)
    const lines = logLines.slice(from)
    expect(lines.filter((l) => l.msg === "not ready")).toHaveLength(1)
    expect(lines.filter((l) => l.msg === "ready again")).toEqual([expect.objectContaining({ level: "warn", was_failing: "chain", failed_probes: 5 })])
  })

  it("turns not-ready when the chain is stopped, naming it, and ready again once it is back on the same port", async () => {
    const { port, rpcUrl } = t.anvil
    const statePath = join(dataDir, "anvil-state-test.json")
    const head = await saveAnvilState(rpcUrl, statePath)
    await t.anvil.stop()
    expect(anvilProcessesOn(port)).toEqual([])

    const down = await ready()
    expect(down.status).toBe(503)
    expect(down.body).toMatchObject({
      error: "not_ready",
      status: "not_ready",
      checks: { journal: { ok: true }, chain: { ok: false }, deposit_service: { ok: true } }
    })
    expect(down.body.checks.chain.detail).toMatch(/^unreachable: /)
    expect(down.body.detail).toMatch(/^chain: unreachable: /)
    // Liveness does not depend on the chain.
    expect((await checked(`${service.http.url}/v1/health`)).status).toBe(200)

    restarted = await startAnvil({ port, args: ["--load-state", statePath] })
    expect(await t.public.getBlockNumber()).toBe(head)
    const back = await ready()
    expect(back.status, JSON.stringify(back.body)).toBe(200)
    expect(back.body.checks.chain.detail).toBe(`head ${head}, watcher 0 blocks behind`)
  }, 60_000)

  it("turns not-ready when DATA_DIR takes no new file, naming the journal, and ready again once it does", async () => {
    await service.chainServices!.poll()
    expect((await ready()).status).toBe(200)
    // Root ignores permission bits, so as root the directory is made immutable (chattr +i: no new
    // entry, whoever asks); otherwise read-only to its owner. Either way the files already open
    // (the journal's segment) keep taking writes: only the readiness probe's new file is refused.
    const unwritable = process.getuid?.() === 0 ? () => execFileSync("chattr", ["+i", dataDir]) : () => chmodSync(dataDir, 0o555)
    const writable = process.getuid?.() === 0 ? () => execFileSync("chattr", ["-i", dataDir]) : () => chmodSync(dataDir, 0o755)
    unwritable()
    try {
      const down = await ready()
      expect(down.status).toBe(503)
      expect(down.body).toMatchObject({ error: "not_ready", status: "not_ready", checks: { journal: { ok: false }, chain: { ok: true }, deposit_service: { ok: true } } })
      expect(down.body.checks.journal.detail).toMatch(/^not writable: E(PERM|ACCES)$/)
      // A response never carries a server path.
      expect(JSON.stringify(down.body)).not.toContain(dataDir)
      expect(down.body.detail).toMatch(/^journal: not writable: /)
      // Liveness does not depend on the disk.
      expect((await checked(`${service.http.url}/v1/health`)).status).toBe(200)
    } finally {
      writable()
    }
    const back = await ready()
    expect(back.status, JSON.stringify(back.body)).toBe(200)
    expect(back.body.checks.journal).toEqual({ ok: true, detail: "writable" })
    expect(readdirSync(dataDir)).not.toContain(".ready-probe")
  })

  it("passes without a chain or a data directory, saying so", async () => {
    const bare = await startService({ host: "127.0.0.1", port: 0, secret: new Uint8Array(32).fill(6), lpTickMs: 0, config }, { nowMs: () => T0_MS })
    try {
      const res = await conformingFetch(declaredApi(), bare.http.url)(`${bare.http.url}/v1/ready`)
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({
        status: "ready",
        checks: {
          journal: { ok: true, detail: "in memory (no DATA_DIR)" },
          history: { ok: true, detail: "in memory (no DATA_DIR)" },
          chain: { ok: true, detail: "no chain configured" },
          deposit_service: { ok: true, detail: "no chain configured" }
        }
      })
    } finally {
      await bare.close()
    }
  })
})
