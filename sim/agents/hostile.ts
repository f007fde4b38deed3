// Clients that misbehave: careless ones that send bad input (and check that each
// mistake gets the right 4xx), and spammers that storm the rate limiter.
import { signOrder } from "../../src/client/keys.ts"
import { Agent, type AgentEnv, type AgentParams } from "./agent.ts"
import type { Rng } from "../world/random.ts"

export type Mistake = "stale_timestamp" | "reused_nonce" | "malformed_body" | "wrong_signature" | "bad_price" | "unknown_market" | "overspend" | "no_session"

/** The error codes an honest server may answer each mistake with. */
const EXPECTED: Record<Mistake, ReadonlyArray<string>> = {
  stale_timestamp: ["stale_timestamp"],
  reused_nonce: ["nonce_stale"],
  malformed_body: ["invalid_json"],
  wrong_signature: ["invalid_signature"],
  bad_price: ["invalid_order_shape", "invalid_price"],
  unknown_market: ["not_found"],
  overspend: ["insufficient_balance"],
  no_session: ["unauthorized"]
}

export class CarelessClient extends Agent {
  constructor(name: string, env: AgentEnv, rng: Rng, params: AgentParams, private readonly mistakes: ReadonlyArray<Mistake>) {
    super(name, env, rng, params)
  }

  protected async act(): Promise<void> {
    const mistake = this.rng.pick(this.mistakes)
    const m = this.rng.pick(this.env.markets)
    const now = this.world.scheduler.nowSec()
    const good = { market_id: m.id, side: "buy" as const, outcome: "yes" as const, price: 5_000, size: 1 }
    let res
    switch (mistake) {
      case "stale_timestamp":
        res = await this.call(() => this.api.register(this.name, now - 3_600))
        break
      case "reused_nonce": {
        // A valid order first, then the same nonce again.
        const first = await this.place({ ...good, price: 100, order_type: "ioc" })
        if (first === null || first.status !== 200) return
        res = await this.call(() => this.api.placeOrder({ ...good, price: 100, order_type: "ioc", nonce: this.nonce }))
        break
      }
      case "malformed_body":
        res = await this.call(() => this.api.request("POST", "/v1/orders", `{"user": "${this.user}", "market_id": `))
        break
      case "wrong_signature": {
        const nonce = ++this.nonce
        const other = signOrder(this.key, { marketId: m.id, outcome: "no", side: "buy", priceBps: 5_000, size: 1, nonce })
        res = await this.call(() => this.api.request("POST", "/v1/orders", { ...good, user: this.user, nonce, signature: other }))
        break
      }
      case "bad_price": {
        // Signed over a valid price; the body carries one out of range (a client cannot sign it).
        const nonce = ++this.nonce
        const signature = signOrder(this.key, { marketId: m.id, outcome: "yes", side: "buy", priceBps: 5_000, size: 1, nonce })
        const price = this.rng.chance(0.5) ? 10_001 : -5
        res = await this.call(() => this.api.request("POST", "/v1/orders", { ...good, price, user: this.user, nonce, signature }))
        break
      }
      case "unknown_market":
        res = await this.call(() => this.api.placeOrder({ ...good, market_id: "no-such-market", nonce: ++this.nonce }))
        break
      case "overspend":
        res = await this.call(() => this.api.placeOrder({ ...good, price: 9_000, size: 90_000_000, nonce: ++this.nonce }))
        break
      case "no_session": {
        const cookie = this.api.cookie
        this.api.cookie = null
        try {
          res = await this.call(() => this.api.placeOrder({ ...good, nonce: ++this.nonce }))
        } finally {
          this.api.cookie = cookie
        }
        break
      }
    }
    this.env.stats.badInputsSent++
    // 429: the limiter spoke first. 202: trading is paused, so any order is queued and judged
    // when it runs (SPEC §8); neither says anything about how the mistake is handled.
    if (res === null || res === undefined || res.status === 429 || res.status === 202) return
    const code = (res.body as { error?: string } | null)?.error ?? `http_${res.status}`
    if (res.status < 400 || res.status >= 500 || !EXPECTED[mistake].includes(code)) {
      this.env.stats.fail(`${this.name}: ${mistake} answered ${res.status} ${code} (expected ${EXPECTED[mistake].join(" or ")})`)
    }
  }
}

/** Bursts of requests from IPs it may share with other spammers: the rate limiter must hold, with 429s and no 5xx. */
export class Spammer extends Agent {
  constructor(name: string, env: AgentEnv, rng: Rng, params: AgentParams, private readonly burst: number, ip?: string) {
    super(name, env, rng, params, ip)
  }

  protected async act(): Promise<void> {
    const m = this.rng.pick(this.env.markets)
    const sends: Promise<unknown>[] = []
    for (let i = 0; i < this.burst; i++) {
      if (i % 2 === 0) sends.push(this.place({ market_id: m.id, side: "buy", outcome: "yes", price: 100 + this.rng.int(0, 50) * 10, size: 1, order_type: "ioc" }))
      else sends.push(this.call(() => this.api.request("GET", `/v1/markets/${m.id}/book`)))
    }
    await Promise.all(sends)
  }
}
