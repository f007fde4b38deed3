// The deposit service (SPEC §4 "Deposit service"): its own HTTP app on DEPOSIT_PORT, the
// implementation of its declaration (src/api/declaration/api.ts DEPOSIT) on the API's router.
// Deposit addresses are counterfactual CREATE2 forwarders (src/chain), so an address
// accepts funds before any contract exists; handing one out registers it for watching.
import { isUserKey } from "../auth/ed25519.ts"
import type { Chain } from "../chain/chain.ts"
import { normalizeAddress } from "../chain/chain.ts"
import { ApiError } from "../domain/errors.ts"
import type { Exchange } from "../service/exchange.ts"
import { depositProgress } from "../service/views.ts"
import { type OnError, type RequestObserver, serveRouter } from "../api/app.ts"
import { json } from "../api/http.ts"
import { DEPOSIT, declaredDepositApi } from "../api/declaration/api.ts"
import { documentHandler } from "../api/openapi.ts"
import { implement, routerOf, type Steps } from "../api/serve.ts"
import type { RateLimiter } from "../usecase/rate-limit.ts"

export interface DepositConfig {
  /** Smallest deposit that credits (staging: 1,000,000 micro). */
  readonly minUsdgMicro: number
  /** Largest single transfer that credits (staging: 100,000,000 micro). */
  readonly maxPerTxMicro: number
  readonly corsOrigins: ReadonlySet<string>
}

export interface DepositCtx {
  readonly exchange: Exchange
  readonly chain: Pick<Chain, "depositAddress" | "info">
  readonly limiter: RateLimiter
  readonly config: DepositConfig
}

export const DEPOSIT_ADDRESS_LIMIT = { name: "ip_deposit_address", limit: 30, windowSec: 60 } as const

const noStore = { "cache-control": "no-store" }

/** The deposit service's preamble steps (src/api/serve.ts): its one per-address bucket. */
const DEPOSIT_STEPS: Steps<DepositCtx> = {
  "ip:ip_deposit_address": (c, req) => c.limiter.takeForAddress(DEPOSIT_ADDRESS_LIMIT, req.ip)
}

/** The deposit group, given the service's error hook (a failed derivation or registration is logged, the client told 500/503). */
const depositGroup = (onError: OnError) =>
  implement<DepositCtx>()(DEPOSIT.deposit, {
    nativeAddress: async (c, { path }) => {
      const wallet = normalizeAddress(path.user_address)
      if (wallet === null) throw new ApiError("invalid_address", "user_address: 0x followed by 40 hex characters")
      let address: string
      try {
        address = c.chain.depositAddress(wallet)
      } catch (err) {
        onError(err)
        throw new ApiError("derivation_failed", "could not derive the deposit address")
      }
      if (c.exchange.watched.get(address) !== wallet) {
        try {
          await c.exchange.submit({ type: "watch_address", wallet, address }).durable
        } catch (err) {
          onError(err)
          throw new ApiError("registration_failed", "the address could not be registered for watching; retry, and do not send funds to an address obtained elsewhere")
        }
      }
      return json(200, depositAddressView(c, address), noStore)
    },
    progress: (c, { path }) => {
      const wallet = normalizeAddress(path.user_address)
      if (wallet === null) throw new ApiError("invalid_pubkey", "user_address: 0x followed by 40 hex characters")
      return json(200, { data: depositProgress(c.exchange, wallet) }, noStore)
    },
    bridgeAddress: (_c, { path }) => {
      if (!isUserKey(path.pubkey)) throw new ApiError("invalid_pubkey", "bridge-address is retired and takes no EVM address; use /v1/deposit/native-address/{0x…}")
      throw new ApiError("retired", "bridge-address is retired; use /v1/deposit/native-address/{user_address}")
    }
  })

/** SPEC §4's deposit address answer, with the instructions a person reads. */
const depositAddressView = (c: DepositCtx, address: string) => {
  const info = c.chain.info
  return {
    address,
    chain: "native",
    chain_id: info.chainId,
    token: "USDG",
    token_address: info.token,
    min_usdg_micro: c.config.minUsdgMicro,
    max_usdc_per_tx_micro: c.config.maxPerTxMicro,
    instructions:
      `Send USDG (token ${info.token}) on chain ${info.chainId} to ${address}. ` +
      `Minimum ${c.config.minUsdgMicro / 1e6} USDG, maximum ${c.config.maxPerTxMicro / 1e6} USDG per transfer. ` +
      "Other tokens or networks do not credit. Credit is automatic once confirmed; link your wallet to your account to receive it."
  }
}

/** `observe`: the live service's request hook (metrics and request lines); the simulator passes none. */
export const makeDepositApp = (ctx: DepositCtx, onError: OnError = () => {}, observe?: RequestObserver) => {
  const router = routerOf(DEPOSIT, { deposit: depositGroup(onError), meta: { openapi: documentHandler(declaredDepositApi) } }, DEPOSIT_STEPS)
  return serveRouter(router, ctx, ctx.config.corsOrigins, onError, observe)
}
