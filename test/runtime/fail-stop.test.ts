// A journal that cannot write (docs/durability.md "fail-stop"), inside the runtime: the write and
// every later one are refused, the failure reaches the owner (its `onFatal`, else its `onError`),
// and the runtime never ends the process — only the entry point does (src/main.ts exits 70).
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Layer, Scope } from "effect"
import { afterEach, describe, expect, it, vi } from "vitest"
import { keyFromLabel } from "../../src/client/keys.ts"
import { makeService, type RunningService, type ServiceConfig } from "../../src/runtime/boot.ts"
import { inlineVerifierLayer, monoClockLayer, nodeTransportLayer, silentLoggerLayer, wallClockLayer } from "../../src/runtime/services.ts"
import { durableStoreLayer } from "../../src/runtime/store.ts"
import { nodeStorage, type Storage } from "../../src/store/storage.ts"

const T0_MS = 1_795_305_600_000

/** node:fs, but every journal write fails with ENOSPC once `full.on` is set. */
const full = { on: false }
const fillingDisk: Storage = {
  ...nodeStorage,
  openAppend: async (path) => {
    const file = await nodeStorage.openAppend(path)
    return {
      ...file,
      writev: (buffers) => (full.on ? Promise.reject(Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" })) : file.writev(buffers))
    }
  }
}

const base: ServiceConfig = {
  host: "127.0.0.1",
  port: 0,
  secret: new Uint8Array(32).fill(4),
  lpTickMs: 0,
  historyFlushMs: 0,
  snapshotIntervalSec: 0,
  config: { adminToken: "fail-stop", corsOrigins: new Set(), secureCookies: false, devCredit: true, rewards: { dailyBudgetMicro: 0, bandSpreadBpsMax: 300, perWalletCapPct: 40 } }
}

const dirs: string[] = []
const scopes: Scope.CloseableScope[] = []
afterEach(async () => {
  full.on = false
  vi.restoreAllMocks()
  // The journal failed: its close may fail too. What matters here is what happened before.
  for (const s of scopes.splice(0)) await Effect.runPromise(Scope.close(s, Exit.void)).catch(() => {})
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

const start = (config: ServiceConfig): Promise<RunningService> => {
  const dir = mkdtempSync(join(tmpdir(), "twinbook-fail-stop-"))
  dirs.push(dir)
  const scope = Effect.runSync(Scope.make())
  scopes.push(scope)
  const layers = Layer.mergeAll(wallClockLayer(() => T0_MS), monoClockLayer(() => 0), inlineVerifierLayer, durableStoreLayer(dir, fillingDisk), nodeTransportLayer, silentLoggerLayer)
  return Effect.runPromise(Scope.extend(makeService(config).pipe(Effect.provide(layers)), scope))
}

const credit = (service: RunningService, ref: string): Promise<void> =>
  service.exchange.submit({ type: "credit", user: keyFromLabel("fail-stop-alice").user, amountMicro: 1_000_000, ref }).durable

describe("a journal that cannot write, inside the runtime", () => {
  it("by default: the failure goes to onError, later writes are refused, and the process is not exited", async () => {
    const exit = vi.spyOn(process, "exit").mockImplementation((() => undefined) as never)
    const errors: unknown[] = []
    const service = await start({ ...base, onError: (err) => void errors.push(err) })
    await credit(service, "before")
    full.on = true
    await expect(credit(service, "refused")).rejects.toThrow(/ENOSPC/)
    expect(exit).not.toHaveBeenCalled()
    expect(errors.map(String)).toEqual([expect.stringContaining("ENOSPC")])
    // Fail-stop: the disk is back, the journal is not (memory may be ahead of it; a restart recovers).
    full.on = false
    await expect(credit(service, "after")).rejects.toThrow(/ENOSPC/)
    expect(exit).not.toHaveBeenCalled()
  }, 60_000)

  it("with the owner's onFatal: told once, and it decides (src/main.ts exits 70 there)", async () => {
    const exit = vi.spyOn(process, "exit").mockImplementation((() => undefined) as never)
    const fatal: unknown[] = []
    const errors: unknown[] = []
    const service = await start({ ...base, onFatal: (err) => void fatal.push(err), onError: (err) => void errors.push(err) })
    full.on = true
    await expect(credit(service, "refused")).rejects.toThrow(/ENOSPC/)
    expect(fatal.map(String)).toEqual([expect.stringContaining("ENOSPC")])
    expect(errors).toEqual([])
    expect(exit).not.toHaveBeenCalled()
  }, 60_000)
})
