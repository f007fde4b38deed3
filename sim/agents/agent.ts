// A simulated user: a real API client with a real Ed25519 key and an EVM wallet,
// going register → link wallet → deposit on the chain → trade → withdraw through
// the same HTTP app and feed hub as a live client. It keeps its own view (orders
// the API acknowledged, the last portfolio frame) for the auditor to compare with
// the service's state.
import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts"
import { walletLinkMessage, withdrawMessage } from "../../src/auth/messages.ts"
import { ApiClient, type ApiResult, type OrderInput } from "../../src/client/api-client.ts"
import type { UserKey } from "../../src/client/keys.ts"
import { fastKeyFromSecret } from "../../src/client/keys-node.ts"
import { SimTimeout } from "../world/network.ts"
import type { Rng } from "../world/random.ts"
import type { SimWs } from "../world/sockets.ts"
import type { RunStats } from "../world/stats.ts"
import type { Truth } from "../world/truth.ts"
import { API, DEPOSIT, type World } from "../world/world.ts"

export interface SimMarket {
  readonly index: number
  readonly id: string
}

export interface AgentEnv {
  readonly world: World
  readonly stats: RunStats
  readonly markets: ReadonlyArray<SimMarket>
  readonly truth: Truth
  /** Agents stop acting at this virtual time; the run then drains. */
  readonly stopAtMs: number
  /** The published taker fee of every market (GET /v1/fees), which takers price in. */
  readonly takerFeeBps: number
}

export interface AgentParams {
  readonly depositUsdc: number
  readonly intervalSec: number
  readonly withdrawPct: number
  readonly websocket: boolean
}

export interface AckedOrder {
  readonly marketId: string
  readonly side: "buy" | "sell"
  readonly outcome: "yes" | "no"
  readonly price: number
  readonly size: number
}

export abstract class Agent {
  readonly key: UserKey
  readonly evm: PrivateKeyAccount
  readonly api: ApiClient
  readonly ip: string
  /** Orders the API acknowledged with an id, by id. */
  readonly acked = new Map<number, AckedOrder>()
  /** Acknowledgements the auditor has not checked yet. */
  readonly newAcks: Array<[number, AckedOrder]> = []
  /** The latest portfolio frame (snapshot or update), as received: parsed only when compared. */
  portfolioFrame: string | null = null
  ws: SimWs | null = null
  onboarded = false
  nonce = 0
  withdrawNonce = 0
  /** 429s this agent received. */
  rateLimited = 0
  /** 429s that came although this agent's own requests were within the bucket's rate (the auditor fails the run on any). */
  readonly refusedWithinRate: string[] = []
  /** Virtual send times of this agent's recent requests (the last two minutes). */
  private readonly callTimesMs: number[] = []
  depositAddress: string | null = null

  constructor(
    readonly name: string,
    readonly env: AgentEnv,
    readonly rng: Rng,
    readonly params: AgentParams,
    ip?: string
  ) {
    this.key = env.world.signatures.signer(fastKeyFromSecret(rng.bytes32("ed25519")))
    this.evm = privateKeyToAccount(`0x${Buffer.from(rng.bytes32("evm")).toString("hex")}`)
    this.ip = ip ?? `10.${(rng.nextU32() >>> 16) & 255}.${(rng.nextU32() >>> 8) & 255}.${rng.nextU32() & 255}`
    this.api = new ApiClient(API, this.key, env.world.network.fetchFor(this.ip, name), () => env.world.scheduler.nowSec())
  }

  /** The state in the latest portfolio frame, or null before the first. */
  get portfolio(): unknown {
    return this.portfolioFrame === null ? null : JSON.parse(this.portfolioFrame).state
  }

  get user(): string {
    return this.key.user
  }

  get world(): World {
    return this.env.world
  }

  /** One decision: an order, a cancel, a read, a withdrawal... */
  protected abstract act(): Promise<void>

  /** Starts the agent's life at a random moment in its first interval. */
  start(): void {
    const first = this.rng.exponential(this.params.intervalSec * 1000) / 4
    this.world.scheduler.after(first, () => void this.live())
  }

  private async live(): Promise<void> {
    if (!(await this.onboard())) return
    const s = this.world.scheduler
    while (s.nowMs() < this.env.stopAtMs) {
      await s.sleep(this.rng.exponential(this.params.intervalSec * 1000))
      if (s.nowMs() >= this.env.stopAtMs) break
      this.env.stats.actions++
      try {
        if (this.params.withdrawPct > 0 && this.rng.chance(this.params.withdrawPct / 100)) await this.withdrawSome()
        else await this.act()
      } catch (err) {
        if (err instanceof SimTimeout) continue
        // An agent defect must not take the run down silently or loudly: it fails the run.
        this.env.stats.fail(`${this.name} threw: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`)
        return
      }
    }
  }

  /** A request; null when it timed out. Error codes are tallied. */
  async call<T = any>(f: () => Promise<ApiResult<T>>): Promise<ApiResult<T> | null> {
    const sentMs = this.world.scheduler.nowMs()
    this.callTimesMs.push(sentMs)
    while (this.callTimesMs.length > 0 && this.callTimesMs[0]! < sentMs - 120_000) this.callTimesMs.shift()
    try {
      const res = await f()
      if (res.status === 429) this.noteRateLimited(res.body)
      if (res.status >= 400) {
        const code = (res.body as { error?: string } | null)?.error
        this.env.stats.code(code ?? `http_${res.status}`)
      }
      return res
    } catch (err) {
      if (err instanceof SimTimeout) return null
      throw err
    }
  }

  /**
   * A token bucket of `limit` per `windowSec` never refuses a key that sent at most `limit`
   * requests in the last window; all of this agent's requests (a superset of any one bucket's
   * charges, counted over 10 s more for latency) within that is a refusal beyond its own rate.
   */
  private noteRateLimited(body: unknown): void {
    this.rateLimited++
    const m = /(\d+) per (\d+) s/.exec((body as { detail?: string } | null)?.detail ?? "")
    if (m === null) return
    const nowMs = this.world.scheduler.nowMs()
    const sent = this.callTimesMs.filter((t) => t > nowMs - (Number(m[2]) + 10) * 1000).length
    if (sent <= Number(m[1])) this.refusedWithinRate.push(`t=${Math.floor(nowMs / 1000)} ${this.name}: 429 (${(body as { detail: string }).detail}) after ${sent} requests in the window`)
  }

  /** Retries a request through timeouts and 429s (honouring retry_after), up to `tries`. */
  async persist<T = any>(f: () => Promise<ApiResult<T>>, tries = 8): Promise<ApiResult<T> | null> {
    for (let i = 0; i < tries; i++) {
      const res = await this.call(f)
      if (res !== null && res.status !== 429 && res.status < 500) return res
      const retryAfter = (res?.body as { retry_after?: number } | null)?.retry_after
      await this.world.scheduler.sleep(retryAfter !== undefined ? retryAfter * 1000 : 1000 * 2 ** Math.min(i, 5))
    }
    return null
  }

  /** register → link wallet → deposit address → transfer on chain → wait for the credit. */
  async onboard(): Promise<boolean> {
    const reg = await this.persist(() => this.api.register(this.name))
    if (reg?.status !== 200) return false
    if (this.params.websocket) this.connect()
    const ts = this.world.scheduler.nowSec()
    const message = walletLinkMessage(this.user, this.evm.address.toLowerCase(), ts)
    const evmSignature = await this.evm.signMessage({ message })
    const link = await this.persist(() =>
      this.api.request("POST", "/v1/wallet/link", {
        user: this.user,
        wallet: this.evm.address,
        timestamp: ts,
        signature: this.key.sign(Buffer.from(message, "utf8")),
        evm_signature: evmSignature
      })
    )
    if (link?.status !== 200) return false
    const addr = await this.persist(() => this.depositFetch())
    if (addr?.status !== 200) return false
    this.depositAddress = String(addr.body.address)
    const amount = BigInt(Math.round(this.params.depositUsdc * 1_000_000))
    if (amount > 0n) {
      const chain = this.world.chain
      chain.mint(chain.info.token, this.evm.address, amount)
      chain.transfer(chain.info.token, this.evm.address, this.depositAddress as `0x${string}`, amount)
      this.env.stats.depositsSent++
      // Credit arrives after confirmations and a sweep; poll the balance meanwhile.
      for (let i = 0; i < 120; i++) {
        await this.world.scheduler.sleep(5_000)
        const bal = await this.call(() => this.api.balance())
        if (bal?.status === 200 && bal.body.total >= Number(amount)) break
        if (this.world.scheduler.nowMs() >= this.env.stopAtMs) return false
      }
    }
    this.onboarded = true
    this.env.stats.agentsOnboarded++
    return true
  }

  private async depositFetch(): Promise<ApiResult> {
    const res = await this.world.network.fetchFor(this.ip, this.name)(`${DEPOSIT}/v1/deposit/native-address/${this.evm.address}`)
    const text = await res.text()
    return { status: res.status, body: JSON.parse(text), headers: res.headers }
  }

  /** Subscribes to its own portfolio; reconnects after a drop. */
  connect(): void {
    const ws = this.world.connectWs(this.user, {
      onFrame: (text) => {
        this.env.stats.wsFrames++
        // Only portfolio frames feed the agent's view, and only the last one is ever compared:
        // keep its text (parsing every frame was a tenth of a busy day's time).
        if (text.startsWith('{"type":"portfolio_snapshot"') || text.startsWith('{"type":"portfolio_update"')) this.portfolioFrame = text
      },
      onClose: () => {
        this.ws = null
        this.env.stats.wsReconnects++
        this.world.scheduler.after(1_000 + this.rng.int(0, 4_000), () => this.connect())
      }
    }, this.name)
    if (ws === null) {
      this.world.scheduler.after(2_000, () => this.connect())
      return
    }
    this.ws = ws
    ws.send({ type: "subscribe", channel: `user:${this.user}` })
  }

  /** Places a signed order and records an acknowledgement. */
  async place(o: Omit<OrderInput, "nonce">): Promise<ApiResult | null> {
    const order: OrderInput = { ...o, nonce: ++this.nonce }
    this.env.stats.ordersSent++
    const res = await this.call(() => this.api.placeOrder(order))
    if (res?.status === 200) {
      this.env.stats.ordersAcked++
      const ack: AckedOrder = { marketId: res.body.market_id, side: o.side, outcome: o.outcome, price: o.price, size: o.size }
      this.acked.set(res.body.order_id, ack)
      this.newAcks.push([res.body.order_id, ack])
    } else if (res?.status === 202) this.env.stats.ordersQueued++
    return res
  }

  async book(marketId: string): Promise<{ bestBid: number | null; bestAsk: number | null } | null> {
    const res = await this.call(() => this.api.request("GET", `/v1/markets/${marketId}/book`))
    if (res?.status !== 200) return null
    const bids = res.body.bids as Array<{ price: number }>
    const asks = res.body.asks as Array<{ price: number }>
    return { bestBid: bids[0]?.price ?? null, bestAsk: asks[0]?.price ?? null }
  }

  /** Withdraws a random part of the available balance to the linked wallet. */
  async withdrawSome(): Promise<void> {
    const bal = await this.call(() => this.api.balance())
    if (bal?.status !== 200 || bal.body.available < 2_000_000) return
    const amountMicro = Math.floor((bal.body.available * this.rng.int(10, 50)) / 100)
    const nonce = ++this.withdrawNonce
    const message = withdrawMessage(this.user, this.evm.address.toLowerCase(), amountMicro, nonce)
    this.env.stats.withdrawalsRequested++
    const res = await this.call(() =>
      this.api.request("POST", "/v1/withdraw-signed", { user: this.user, amount_micro: amountMicro, nonce, signature: this.key.sign(Buffer.from(message, "utf8")) })
    )
    if (res?.status === 200) this.env.stats.withdrawalsAcked++
  }
}
