// The service takes its side effects from its Effect context (docs/runtime.md "Tags and layers"):
// the same `makeService` runs on whichever layers a test provides, through @effect/vitest.
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { demoCatalog } from "../../fixtures/catalog.ts"
import type { Verifier } from "../../src/auth/verifier.ts"
import { ApiClient } from "../../src/client/api-client.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import { makeService, type ServiceConfig } from "../../src/runtime/boot.ts"
import {
  inlineVerifierLayer,
  monoClockLayer,
  nodeTransportLayer,
  silentLoggerLayer,
  verifierLayer,
  type VerifierService,
  wallClockLayer
} from "../../src/runtime/services.ts"
import { memoryStoreLayer } from "../../src/runtime/store.ts"

const T0_MS = 1_795_305_600_000
const ADMIN = "layers-admin"

const config: ServiceConfig = {
  host: "127.0.0.1",
  port: 0,
  secret: new Uint8Array(32).fill(3),
  catalog: demoCatalog(),
  lpTickMs: 0,
  config: {
    adminToken: ADMIN,
    corsOrigins: new Set(),
    secureCookies: false,
    devCredit: true,
    rewards: { dailyBudgetMicro: 1_000_000_000, bandSpreadBpsMax: 300, perWalletCapPct: 40 }
  }
}

/** Everything in memory on a fixed test clock, with the verifier under test. */
const testLayers = (verifier: Layer.Layer<VerifierService>) =>
  Layer.mergeAll(wallClockLayer(() => T0_MS), monoClockLayer(() => 0), verifier, memoryStoreLayer, nodeTransportLayer, silentLoggerLayer)

/** Registers, funds through the operator API and places one signed order; the order's HTTP status. */
const placeOne = (url: string, marketId: string) =>
  Effect.promise(async () => {
    const c = new ApiClient(url, keyFromLabel("layers-alice"), fetch, () => Math.floor(T0_MS / 1000))
    expect((await c.register("alice")).status).toBe(200)
    const credit = await fetch(`${url}/v1/admin/credit`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
      body: JSON.stringify({ user: c.user, amount_micro: 100_000_000 })
    })
    expect(credit.status).toBe(200)
    const res = await c.placeOrder({ market_id: marketId, side: "buy", outcome: "yes", price: 4000, size: 5 })
    return { status: res.status, body: res.body as { error?: string } }
  })

layer(testLayers(inlineVerifierLayer))("on the test layers", (it) => {
  it.scoped("commands are stamped by the WallClock layer, and orders verify with the inline verifier", () =>
    Effect.gen(function* () {
      const service = yield* makeService(config)
      expect(service.exchange.journalMs()).toBe(T0_MS)
      expect(service.durable).toBeNull()
      const placed = yield* placeOne(service.http.url, service.exchange.catalog.market("eth-above-6k-2027-h1")!.market.market_id)
      expect(placed.status).toBe(200)
      // The catalogue and the order were journaled at the layer's time, not the machine's.
      expect(service.exchange.journalSec()).toBe(Math.floor(T0_MS / 1000))
    })
  )
})

/** A verifier that refuses every signature: swapping its layer is all it takes. */
const refuseAll: Verifier = { verify: () => Promise.resolve(false), close: () => Promise.resolve() }

layer(testLayers(verifierLayer(refuseAll)))("with the verifier layer swapped", (it) => {
  it.scoped("the same service refuses a correctly signed order", () =>
    Effect.gen(function* () {
      const service = yield* makeService(config)
      const placed = yield* placeOne(service.http.url, service.exchange.catalog.market("eth-above-6k-2027-h1")!.market.market_id)
      expect(placed.status).toBe(403)
      expect(placed.body.error).toBe("invalid_signature")
    })
  )
})
