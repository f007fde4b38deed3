// The development faucet (docs/api.md "Development faucet"): test USDG minted to a wallet on the
// embedded chain, for a registered user (the route checks the session). The composition root
// hands it either a faucet or the reason there is none (DEV_CREDIT off, an external chain, no
// chain), so the refusal names what to change. The API's route is the only way in: the web app
// calls it too (docs/decisions.md "One faucet").
import { type Address, normalizeAddress } from "../chain/chain.ts"
import type { DevFaucet } from "../chain/faucet.ts"
import { ApiError } from "../domain/errors.ts"
import type { BucketSpec } from "./rate-limit.ts"

/** What the service was started with: a faucet (embedded chain, DEV_CREDIT on), or why not. */
export type FaucetAccess = { readonly faucet: DevFaucet } | { readonly refused: string }

/**
 * Mints per window (extensions; SPEC §8 sets none). Every mint is a mined transaction and the
 * faucet mints one at a time, so a flood would queue everyone else's behind it. Per user, and
 * per source address for all the users behind it (registering costs nothing but its own limit).
 */
export const FAUCET_LIMITS = {
  user: { name: "faucet_user", limit: 5, windowSec: 60 },
  ip: { name: "faucet_ip", limit: 60, windowSec: 60 }
} as const satisfies Record<string, BucketSpec>

/** At most 1,000,000 USDG per request: test money, but still an integer well inside 2^53 micro. */
export const FAUCET_MAX_MICRO = 1_000_000_000_000

/** The refusal when the service has no faucet: DEV_CREDIT=false, CHAIN_RPC_URL set, or CHAIN=off. */
export const faucetRefusal = (devCredit: boolean, chain: "embedded" | "external" | "off"): string | null =>
  !devCredit
    ? "the faucet is disabled (DEV_CREDIT=false)"
    : chain === "external"
      ? "the faucet mints only on the embedded development chain; this service uses an external chain (CHAIN_RPC_URL)"
      : chain === "off"
        ? "the faucet needs the embedded chain; this service runs without one (CHAIN=off)"
        : null

export interface FaucetRequest {
  readonly address: unknown
  readonly amount_micro: unknown
}

export interface FaucetResult {
  readonly address: Address
  readonly tx_hash: string
  readonly amount_micro: number
}

/** The faucet, or `404 not_found` saying why there is none: checked first, so the reason is never hidden behind a 401. */
export const faucetOf = (access: FaucetAccess | undefined): DevFaucet => {
  if (access === undefined) throw new ApiError("not_found", "this service has no faucet")
  if ("refused" in access) throw new ApiError("not_found", access.refused)
  return access.faucet
}

/** Checks the address and amount, then mints; a chain failure is `502 faucet_failed`. */
export const requestFaucet = async (faucet: DevFaucet, body: FaucetRequest): Promise<FaucetResult> => {
  const address = normalizeAddress(body.address)
  if (address === null) throw new ApiError("invalid_address", "address must be 0x followed by 40 hex characters")
  const amountMicro = body.amount_micro
  if (typeof amountMicro !== "number" || !Number.isSafeInteger(amountMicro) || amountMicro < 1 || amountMicro > FAUCET_MAX_MICRO) {
    throw new ApiError("invalid_amount", `amount_micro must be an integer from 1 to ${FAUCET_MAX_MICRO} (1,000,000 micro = 1 USDG)`)
  }
  let txHash: string
  try {
    txHash = (await faucet(address, BigInt(amountMicro))).txHash
  } catch (err) {
    throw new ApiError("faucet_failed", `the chain refused the mint: ${err instanceof Error ? err.message : String(err)}`)
  }
  return { address, tx_hash: txHash, amount_micro: amountMicro }
}
