// Every error code the service answers (SPEC §7 and docs/api.md), in words a person can act on.
// The code itself is shown beside the words so support can still find it.

const WORDS: Readonly<Record<string, string>> = {
  // orders
  would_cross: "Post-only order would cross the book and take liquidity. Move the price away from the other side, or use GTC.",
  insufficient_balance: "Not enough available balance for this order. Deposit, or cancel open orders to free locked funds.",
  insufficient_shares: "You don't hold enough shares to sell. Selling is only possible for shares you own (buy the other outcome instead).",
  fok_unfilled: "Fill-or-kill could not fill the whole size at this price; nothing was traded.",
  dust_order: "Order too small: size × price must be at least 1¢.",
  market_halted: "This market is halted: it is not accepting orders right now.",
  market_resolved: "This market has resolved: it no longer accepts orders.",
  nonce_stale: "The order's nonce was already used (another tab or bot placed one meanwhile). Try again.",
  order_rejected: "The exchange refused the order.",
  order_not_found: "That order is no longer resting (filled or cancelled already).",
  invalid_order_shape: "The order is malformed (a field is out of range).",
  unknown_builder: "The builder API key is not registered.",
  trading_disabled: "Trading is closed right now. Orders are refused until it reopens; this page retries by itself.",
  // session
  unauthorized: "You are signed out (the session expired). Sign in again with your key.",
  stale_timestamp: "Your computer's clock is more than 60 s off. Fix the clock, then sign in again.",
  invalid_signature: "The signature did not verify for this key.",
  invalid_signature_format: "The signature is malformed.",
  session_user_mismatch: "This session belongs to another key. Sign out and sign in again.",
  user_mismatch: "This belongs to another account.",
  forbidden_origin: "The service does not accept requests from this page's address (CORS_ORIGINS).",
  // wallet, deposit, withdraw
  wallet_already_linked: "This account already has a different wallet linked; withdrawals can only go to it.",
  wallet_taken: "That wallet is already linked to another account.",
  invalid_address: "That is not an EVM address (0x followed by 40 hex characters).",
  invalid_amount: "Enter a positive amount.",
  engine_rejected: "The exchange refused the withdrawal.",
  engine_unreachable: "The withdrawal service is unreachable right now; nothing was debited. Try again shortly.",
  engine_binding_disabled: "Withdrawals are temporarily unavailable; nothing was debited.",
  registration_failed: "The deposit address could not be registered for watching. Retry; do not send funds yet.",
  derivation_failed: "The deposit address could not be derived. Retry later.",
  faucet_failed: "The test-USDG faucet failed.",
  // LP bot
  lp_disabled: "Liquidity provision is paused by the operator. The bot waits and resumes by itself.",
  scope_missing: "The session scope is missing.",
  scope_forbidden: "Session keys may only place orders.",
  expiry_out_of_range: "The delegation must last between 5 minutes and 30 days.",
  session_already_delegated: "That session key was already delegated; start a new one.",
  session_not_delegated: "Delegate a session key before starting the server-managed bot.",
  session_revoked: "That session key was revoked; delegate a new one.",
  session_expired: "That session key expired; delegate a new one.",
  // generic
  invalid_json: "The request was not valid JSON.",
  invalid_shape: "A field is invalid.",
  invalid_query: "A query parameter is invalid.",
  invalid_pubkey: "That key is not a valid Ed25519 public key.",
  not_found: "Not found.",
  rate_limited: "Too many requests; wait a moment.",
  payload_too_large: "The request is too large.",
  internal_error: "The service hit an internal error.",
  network_error: "Cannot reach the service. Check that it is running; this page keeps retrying."
}

export interface ErrorBody {
  readonly error?: string
  readonly detail?: string
  readonly retry_after?: number
}

/** "Not enough available balance … (insufficient_balance: detail)". */
export const describeError = (status: number, body: ErrorBody | null | undefined): string => {
  const code = body?.error ?? `http_${status}`
  const engineDetail = code === "engine_rejected" && body?.detail !== undefined ? WORDS[body.detail] : undefined
  const words = engineDetail ?? WORDS[code] ?? `The service refused the request (HTTP ${status}).`
  const extra = [code, body?.detail, body?.retry_after !== undefined ? `retry in ${body.retry_after}s` : undefined].filter((s) => s !== undefined && s !== "")
  return `${words} (${extra.join(": ")})`
}

export const knownErrorCodes = (): ReadonlyArray<string> => Object.keys(WORDS)
