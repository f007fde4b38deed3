// The typed twinbook client for one user key: the public reads (PublicClient) plus
// everything the key signs or the session cookie authorises: register, orders with
// time-based nonces, cancels, wallet link, withdraw, the server-managed LP bot.
// Browser-safe; the same class drives the simulator's agents and the benches.
import { delegationMessage, walletLinkMessage } from "../auth/messages.ts"
import { type ApiResult } from "./errors.ts"
import { sessionProof, signDelegation, signOrder, signWalletLink, signWithdraw, type UserKey } from "./keys.ts"
import { type ClientOptions, type FetchLike, globalFetch, PublicClient } from "./public-client.ts"
import { API_TABLE } from "../api/declaration/table.ts"
import type {
  AccountNonces,
  Balance,
  CancelAllRequest,
  CancelAllResponse,
  CancelRequest,
  CancelResponse,
  FaucetRequest,
  FaucetResponse,
  LpDelegated,
  LpDelegateRequest,
  LpSessionNew,
  LpSessionNewRequest,
  LpStartRequest,
  LpStartResponse,
  LpStatus,
  LpStopRequest,
  LpStopResponse,
  OpenOrders,
  OrderInput,
  OrderRequest,
  OrderResponse,
  PageQuery,
  Position,
  Positions,
  RegisterRequest,
  RegisterResponse,
  RewardsMe,
  StrategyWire,
  UserDeposits,
  UserTrades,
  UserWithdrawals,
  WalletLink,
  WalletLinkRequest,
  WithdrawRequest,
  WithdrawResponse
} from "./types.ts"

export type { ApiResult } from "./errors.ts"
export type { ClientOptions, FetchLike } from "./public-client.ts"
export type { OrderInput } from "./types.ts"

export interface ApiClientOptions extends ClientOptions {
  /**
   * Milliseconds for the time-based nonces. Default: the wall clock in milliseconds when
   * `nowSec` is the default too, else `nowSec() * 1000` (the simulator's virtual clock, so
   * runs stay deterministic). Whole seconds live would refuse a second client's order placed
   * in the same second as the first's (`nonce_stale`).
   */
  readonly nowMs?: () => number
}

const wallClockSec = (): number => Math.floor(Date.now() / 1000) // live-only: the default clock of a live client (register timestamps)
const wallClockMs = (): number => Date.now() // live-only: the default clock of a live client's nonces

/** Signs the wallet-link text with the EVM wallet (EIP-191 personal_sign); returns 0x-hex. */
export type EvmSigner = (message: string) => Promise<string> | string

export class ApiClient extends PublicClient {
  apiKey: string | null = null
  /** The last order nonce this client signed (see `nextNonce`). */
  private nonce = 0
  private withdrawNonce = 0
  private readonly nowMs: () => number

  constructor(
    baseUrl: string,
    readonly key: UserKey,
    fetchFn: FetchLike = globalFetch,
    private readonly nowSec: () => number = wallClockSec,
    options: ApiClientOptions = {}
  ) {
    super(baseUrl, fetchFn, options)
    this.nowMs = options.nowMs ?? (nowSec === wallClockSec ? wallClockMs : () => this.nowSec() * 1000)
  }

  get user(): string {
    return this.key.user
  }

  /** The last order nonce this client used (0 before any). */
  get lastNonce(): number {
    return this.nonce
  }

  /**
   * The nonce policy (docs/sdk.md): `max(last + 1, nowMs)`. Time-based, so a key used
   * from two tabs, after a reload, or beside its server-managed bot (which takes the
   * server's last + 1) keeps moving forward without a read; `last + 1` keeps it strictly
   * increasing within one millisecond. Advances the client's counter.
   */
  nextNonce(): number {
    this.nonce = Math.max(this.nonce + 1, Math.floor(this.nowMs()))
    return this.nonce
  }

  /** `GET /v1/account/nonce` (extension; session cookie): the server's last accepted order and withdraw nonces. */
  nonces(): Promise<ApiResult<AccountNonces>> {
    return this.call(API_TABLE.nonces.nonces, {})
  }

  /**
   * Raises this client's counters to the server's last accepted nonces, so a restarted bot whose
   * clock went back (or that set nonces by hand) never signs a stale one. Needs the session.
   */
  async syncNonces(): Promise<ApiResult<AccountNonces>> {
    const res = await this.nonces()
    if (res.status === 200) {
      this.nonce = Math.max(this.nonce, res.body.last_order_nonce)
      this.withdrawNonce = Math.max(this.withdrawNonce, res.body.last_withdraw_nonce)
    }
    return res
  }

  /**
   * `POST /v1/dev/faucet` (extension; session cookie, so `register` first): mints `amountMicro` test
   * USDG and gas to an EVM wallet on the service's embedded development chain.
   */
  faucet(address: string, amountMicro: number): Promise<ApiResult<FaucetResponse>> {
    return this.call(API_TABLE.dev.faucet, { body: { address, amount_micro: amountMicro } satisfies FaucetRequest })
  }

  /**
   * Bootstraps the session: signs SPEC §5.1's message, captures the cookie (Node) and `api_key`.
   * Each call signs a timestamp this key has not used (proofs are single-use), unless given one;
   * a proof refused `403 invalid_signature` is signed once more with the next second first, since
   * another page or process of the same key may have used that second.
   */
  async register(name = "client", timestampSec?: number): Promise<ApiResult<RegisterResponse>> {
    let res = await this.registerWith(name, sessionProof(this.key, this.nowSec(), timestampSec))
    if (timestampSec === undefined && res.status === 403 && (res.body as { error?: unknown } | null)?.error === "invalid_signature") {
      res = await this.registerWith(name, sessionProof(this.key, this.nowSec()))
    }
    if (res.status === 200) {
      this.apiKey = res.body.api_key
      // Node: replay the cookie ourselves. A browser never shows it (HttpOnly); it rides
      // on `credentials: "include"` instead.
      const setCookie = res.headers.get("set-cookie")
      if (setCookie !== null) this.cookie = setCookie.split(";")[0]!
    }
    return res
  }

  private registerWith(name: string, proof: { readonly timestamp: number; readonly signature: string }): Promise<ApiResult<RegisterResponse>> {
    return this.call(API_TABLE.session.register, { body: { user: this.user, name, signature: proof.signature, timestamp: proof.timestamp } satisfies RegisterRequest })
  }

  /** Forgets the session on this side (there is no logout route: a browser's cookie lapses after 7 days). */
  signOut(): void {
    this.cookie = null
    this.apiKey = null
  }

  /** Signs and places an order. Without `nonce` it takes `nextNonce()`; a given nonce also advances the counter. */
  placeOrder(o: OrderInput): Promise<ApiResult<OrderResponse>> {
    const nonce = o.nonce ?? this.nextNonce()
    if (nonce > this.nonce) this.nonce = nonce
    const signature = signOrder(this.key, { marketId: o.market_id, outcome: o.outcome, side: o.side, priceBps: o.price, size: o.size, nonce })
    return this.call(API_TABLE.orders.place, { body: { ...o, user: this.user, nonce, signature } satisfies OrderRequest })
  }

  /** Cancel and cancel-all signatures are not verified (SPEC §5.7): the cookie authorises them. */
  cancel(orderId: number): Promise<ApiResult<CancelResponse>> {
    return this.call(API_TABLE.orders.cancel, { body: { order_id: orderId, signature: "", nonce: 0 } satisfies CancelRequest })
  }

  /** Every resting order of the session user, or only those of `marketId` (extension). */
  cancelAll(marketId?: string): Promise<ApiResult<CancelAllResponse>> {
    return this.call(API_TABLE.orders.cancelAll, { body: { signature: "", nonce: 0, ...(marketId === undefined ? {} : { market_id: marketId }) } satisfies CancelAllRequest })
  }

  // ---- this user's reads (the public reads with `user` defaulting to this key) ----

  override balance(user: string = this.user): Promise<ApiResult<Balance>> {
    return super.balance(user)
  }

  override position(marketId: string, user: string = this.user): Promise<ApiResult<Position>> {
    return super.position(marketId, user)
  }

  override positions(user: string = this.user): Promise<ApiResult<Positions>> {
    return super.positions(user)
  }

  override orders(user: string = this.user): Promise<ApiResult<OpenOrders>> {
    return super.orders(user)
  }

  override trades(user: string = this.user, q: PageQuery = {}): Promise<ApiResult<UserTrades>> {
    return super.trades(user, q)
  }

  override deposits(user: string = this.user, q: PageQuery = {}): Promise<ApiResult<UserDeposits>> {
    return super.deposits(user, q)
  }

  override withdrawals(user: string = this.user, q: PageQuery = {}): Promise<ApiResult<UserWithdrawals>> {
    return super.withdrawals(user, q)
  }

  override wallet(user: string = this.user): Promise<ApiResult<WalletLink>> {
    return super.wallet(user)
  }

  override rewardsMe(user: string = this.user): Promise<ApiResult<RewardsMe>> {
    return super.rewardsMe(user)
  }

  override lpStatus(user: string = this.user): Promise<ApiResult<LpStatus>> {
    return super.lpStatus(user)
  }

  // ---- wallet link and withdraw (docs/api.md "Wallet link", "Withdraw") ----

  /**
   * Links `wallet` to this key: both keys sign the same four lines; `signEvm` is the
   * wallet's personal_sign (viem: `(message) => walletClient.signMessage({ account, message })`).
   */
  async linkWallet(wallet: string, signEvm: EvmSigner, timestampSec = this.nowSec()): Promise<ApiResult<WalletLink>> {
    const w = wallet.toLowerCase()
    const evmSignature = await signEvm(walletLinkMessage(this.user, w, timestampSec))
    return this.call(API_TABLE.wallet.link, {
      body: { user: this.user, wallet: w, timestamp: timestampSec, signature: signWalletLink(this.key, w, timestampSec), evm_signature: evmSignature } satisfies WalletLinkRequest })
  }

  /**
   * Withdraws to the linked wallet (read first unless given). The withdraw nonce follows
   * the order nonce's policy, `max(last + 1, nowMs)`, unless `nonce` is given. A refused
   * attempt consumes no nonce on the server, so a retry may reuse or exceed it.
   */
  async withdraw(amountMicro: number, opts: { readonly nonce?: number; readonly wallet?: string } = {}): Promise<ApiResult<WithdrawResponse>> {
    let wallet = opts.wallet
    if (wallet === undefined) {
      const linked = await this.wallet()
      if (linked.status !== 200) return linked as ApiResult
      wallet = linked.body.wallet
    }
    const nonce = opts.nonce ?? Math.max(this.withdrawNonce + 1, Math.floor(this.nowMs()))
    if (nonce > this.withdrawNonce) this.withdrawNonce = nonce
    return this.call(API_TABLE.wallet.withdraw, { body: { user: this.user, amount_micro: amountMicro, nonce, signature: signWithdraw(this.key, wallet, amountMicro, nonce) } satisfies WithdrawRequest })
  }

  // ---- the server-managed LP bot (docs/api.md "LP bot") ----

  /** Asks the server for a session key and the delegation message to sign. */
  lpSessionNew(expiresInSecs = 86_400): Promise<ApiResult<LpSessionNew>> {
    return this.call(API_TABLE["lp-bot"].sessionNew, { body: { user: this.user, expires_in_secs: expiresInSecs, scope: "orders" } satisfies LpSessionNewRequest })
  }

  /**
   * Delegates a session: rebuilds the message from the session's fields and refuses
   * (throws) unless it equals `message_bytes_hex`, so the key never signs bytes it
   * has not checked (another user, another scope, a longer expiry).
   */
  lpDelegate(session: LpSessionNew): Promise<ApiResult<LpDelegated>> {
    const expected = delegationMessage({
      user: this.user,
      sessionPub: session.session_pub,
      scope: "orders",
      expiresAtUnix: session.expires_at_unix,
      nonce: session.nonce
    })
    const hex = Array.from(expected, (b) => b.toString(16).padStart(2, "0")).join("")
    if (session.user !== this.user || session.scope !== "orders" || hex !== session.message_bytes_hex.toLowerCase()) {
      throw new Error("refusing to sign: message_bytes_hex does not match this user's orders-only session")
    }
    return this.call(API_TABLE["lp-bot"].delegate, {
      body: {
        user: this.user,
        session_pub: session.session_pub,
        expires_at_unix: session.expires_at_unix,
        nonce: session.nonce,
        scope: "orders",
        signature: signDelegation(this.key, hex)
      } satisfies LpDelegateRequest })
  }

  /** Starts (or replaces) the bot on 1..20 markets with a strategy in docs/lp.md's wire form. */
  lpStart(sessionPub: string, markets: ReadonlyArray<string>, strategy: StrategyWire): Promise<ApiResult<LpStartResponse>> {
    return this.call(API_TABLE["lp-bot"].start, { body: { user: this.user, session_pub: sessionPub, markets, strategy } satisfies LpStartRequest })
  }

  /** Stops the bot (its orders are cancelled); `revokeSession` also revokes every session key. */
  lpStop(revokeSession = false): Promise<ApiResult<LpStopResponse>> {
    return this.call(API_TABLE["lp-bot"].stop, { body: { user: this.user, revoke_session: revokeSession } satisfies LpStopRequest })
  }

  /** session/new → delegate → start in one call; the first non-2xx answer is returned as is. */
  async lpLaunch(markets: ReadonlyArray<string>, strategy: StrategyWire, expiresInSecs = 86_400): Promise<ApiResult<LpStartResponse>> {
    const session = await this.lpSessionNew(expiresInSecs)
    if (session.status !== 200) return session as ApiResult
    const delegated = await this.lpDelegate(session.body)
    if (delegated.status !== 200) return delegated as ApiResult
    return this.lpStart(session.body.session_pub, markets, strategy)
  }
}
