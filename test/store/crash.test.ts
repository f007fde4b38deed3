// Crash test (issue 5): the real server (`src/main.ts`) as a child process on a
// DATA_DIR, driven at load by concurrent clients with real Ed25519 keys (signed
// orders resting and crossing, cancels, cancel-alls, operator credits standing
// in for deposits), SIGKILLed at seeded points several times and restarted on
// the same directory. Every answer the clients got is kept; after each kill and
// each restart the test checks, for any timing of the load:
//  - every acknowledged order, fill, cancel and credit is in the journal, and a
//    credit or order whose answer the kill swallowed is there at most once;
//  - money is conserved exactly: users + house + market backing = credits, and
//    the credits lie between those acknowledged and those attempted;
//  - no trade id is duplicated; each acknowledged fill is listed once by its
//    maker and once by its taker (GET /v1/trades/all);
//  - the live server (balances, open orders, positions, trades, books) equals a
//    replay of the whole journal from genesis without snapshots, and recovering
//    the directory in-process (newest snapshot + journal) gives the same state hash.
// Even cycles kill only after a snapshot was written under load; half the kills
// (seeded) also leave a torn write at the journal's end. CRASH_SEED=n replays
// another seed (kill points, load, think times, torn tails).
import { appendFileSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { demoCatalog } from "../../fixtures/catalog.ts"
import { ApiClient, type ApiResult, type OrderInput } from "../../src/client/api-client.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import { findViolations } from "../../src/engine/invariants.ts"
import { FEE_ACCOUNT } from "../../src/engine/money.ts"
import type { FillEvent } from "../../src/engine/types.ts"
import { idFromSlug } from "../../src/service/catalog.ts"
import { exchangeHash } from "../../src/service/exchange-snapshot.ts"
import { Exchange } from "../../src/service/exchange.ts"
import { allPositions, balanceView, bookView, openOrders } from "../../src/service/views.ts"
import { journalDir, recoverExchange, snapshotDir } from "../../src/store/durable.ts"
import { listSegments, readJournal, type TornTail } from "../../src/store/file-journal.ts"
import { HEADER_BYTES } from "../../src/store/journal-format.ts"
import { type ChildServer, loopbackTransport, startChildServer } from "../support/child-server.ts"

const SEED = Number(process.env.CRASH_SEED ?? 0x5eed_c4a5)
const CLIENTS = 24
const KILL_CYCLES = 4
const ADMIN_TOKEN = "crash-test-admin-token"
/** Per process lifetime the limiter allows 50 orders per wallet and 60 operator calls per IP; stay under. */
const ORDER_BUDGET = 40
const CREDIT_BUDGET = 6
const INITIAL_CREDIT = 2_000_000_000
const noSink = { append: () => Promise.resolve() }

/** mulberry32: small, fast, seed-determined. */
const prng = (seed: number): (() => number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

// ---------------------------------------------------------------- what the clients were told

interface AckFill {
  readonly trade_id: number
  readonly price: number
  readonly size: number
  readonly maker: string
  readonly maker_order_id: number
}

interface AckOrder {
  readonly user: string
  readonly nonce: number
  readonly orderId: number
  readonly size: number
  readonly status: string
  readonly fills: ReadonlyArray<AckFill>
}

class Ledger {
  readonly orders: AckOrder[] = []
  readonly cancels: Array<{ user: string; orderId: number }> = []
  /** A cancel-all and the acknowledged orders of its user placed before it. */
  readonly cancelAlls: Array<{ user: string; before: number[] }> = []
  /** Credit amounts are unique, so each names one request. */
  readonly creditsAcked = new Map<number, string>()
  readonly creditsAttempted = new Map<number, string>()
  readonly tally = { acked: 0, refused4xx: 0, rateLimited: 0, lost: 0, server5xx: [] as string[] }
  private creditSerial = 0

  /** A fresh, unique amount: the serial sits below the 10-USDC step. */
  nextCreditAmount(random: () => number, base = 10_000_000): number {
    return base * (1 + Math.floor(random() * 5)) + ++this.creditSerial
  }

  sum(m: Map<number, string>): number {
    let s = 0
    for (const amount of m.keys()) s += amount
    return s
  }
}

// ---------------------------------------------------------------- load

interface Cycle {
  /** Acknowledgements in this cycle; the kill comes with number `killAt` or the first one after. */
  acks: number
  readonly killAt: number
  /** False until the kill may come (a cycle that waits for a snapshot arms once one is on disk). */
  armed: boolean
  stopped: boolean
  readonly kill: () => void
}

class Trader {
  readonly api: ApiClient
  readonly user: string
  private readonly random: () => number
  private nonce = 0
  private resting: number[] = []
  /** Shares this client believes it holds, per market and outcome (from its own fills). */
  private readonly held = new Map<string, number>()
  private ordersLeft = 0
  private creditsLeft = 0

  constructor(
    readonly index: number,
    readonly transport: ReturnType<typeof loopbackTransport>,
    private readonly markets: ReadonlyArray<string>,
    private readonly ledger: Ledger,
    seed: number
  ) {
    this.random = prng(seed)
    this.api = new ApiClient("http://server", keyFromLabel(`crash-${index}`), transport, () => Math.floor(Date.now() / 1000)) // live-only: the child runs on the system clock
    this.user = this.api.user
  }

  private int(n: number): number {
    return Math.floor(this.random() * n)
  }

  async credit(amount: number): Promise<ApiResult | null> {
    this.ledger.creditsAttempted.set(amount, this.user)
    const res = await this.send(() => this.api.request("POST", "/v1/admin/credit", { user: this.user, amount_micro: amount }, { authorization: `Bearer ${ADMIN_TOKEN}` }))
    if (res?.status === 200) this.ledger.creditsAcked.set(amount, this.user)
    return res
  }

  /** Runs seeded operations until the cycle stops or the budgets are spent. */
  async run(cycle: Cycle): Promise<void> {
    this.ordersLeft = ORDER_BUDGET
    this.creditsLeft = CREDIT_BUDGET
    while (!cycle.stopped) {
      const ok = await this.step()
      if (ok === "idle") return
      if (ok) {
        cycle.acks++
        if (cycle.acks >= cycle.killAt && cycle.armed) cycle.kill()
      }
      // Think time (seeded): spreads a cycle's budget over a second or two, so timers
      // (snapshots, history flushes) fire under load. Load shaping, not a readiness wait.
      if (!cycle.stopped) await new Promise((resolve) => setTimeout(resolve, 2 + this.int(18)))
    }
  }

  /** One operation: true when acknowledged (200), false otherwise, "idle" when nothing is left to do. */
  private async step(): Promise<boolean | "idle"> {
    const r = this.random()
    if (r < 0.06 && this.creditsLeft > 0) {
      this.creditsLeft--
      return (await this.credit(this.ledger.nextCreditAmount(this.random)))?.status === 200
    }
    if (r < 0.26 && this.resting.length > 0) {
      const orderId = this.resting[this.int(this.resting.length)]!
      const res = await this.send(() => this.api.cancel(orderId))
      if (res === null) return false
      if (res.status === 200) this.ledger.cancels.push({ user: this.user, orderId })
      // Cancelled now, or gone already (filled): either way no longer ours to cancel.
      if (res.status === 200 || res.status === 404) this.resting = this.resting.filter((id) => id !== orderId)
      return res.status === 200
    }
    if (r < 0.29) {
      const before = this.ledger.orders.filter((o) => o.user === this.user).map((o) => o.orderId)
      const res = await this.send(() => this.api.cancelAll())
      if (res?.status !== 200) return false
      this.ledger.cancelAlls.push({ user: this.user, before })
      this.resting = []
      return true
    }
    if (this.ordersLeft === 0) return this.resting.length === 0 && this.creditsLeft === 0 ? "idle" : false
    this.ordersLeft--
    return this.order()
  }

  private async order(): Promise<boolean> {
    const market = this.markets[this.int(this.markets.length)]!
    const outcome = this.random() < 0.5 ? ("yes" as const) : ("no" as const)
    const size = 1 + this.int(20)
    const kind = this.random()
    let o: OrderInput
    const heldKey = `${market}|${outcome}`
    const held = this.held.get(heldKey) ?? 0
    if (kind < 0.12 && held > 0) {
      // Sell shares this client got from earlier fills (a normal trade against a buyer of the same outcome).
      o = { market_id: market, side: "sell", outcome, price: 3_500 + 10 * this.int(300), size: Math.min(held, size) }
    } else if (kind < 0.45) {
      // Crossing: above 50% it meets the other outcome's passive bids (mint) or resting sells.
      o = { market_id: market, side: "buy", outcome, price: 5_100 + 10 * this.int(150), size, order_type: this.random() < 0.5 ? "ioc" : "gtc" }
    } else {
      o = { market_id: market, side: "buy", outcome, price: 3_000 + 10 * this.int(190), size, order_type: this.random() < 0.2 ? "post_only" : "gtc" }
    }
    const nonce = ++this.nonce
    const res = await this.send(() => this.api.placeOrder({ ...o, nonce }))
    if (res?.status !== 200) return false
    const b = res.body as { order_id: number; status: string; fills: AckFill[] }
    this.ledger.orders.push({ user: this.user, nonce, orderId: b.order_id, size: o.size, status: b.status, fills: b.fills })
    if (b.status === "resting") this.resting.push(b.order_id)
    const filled = b.fills.reduce((n, f) => n + f.size, 0)
    this.held.set(heldKey, held + (o.side === "buy" ? filled : -filled))
    return true
  }

  /** A request whose connection died (the kill) gives null: its outcome is unknown. */
  private async send(call: () => Promise<ApiResult>): Promise<ApiResult | null> {
    try {
      const res = await call()
      if (res.status === 200) this.ledger.tally.acked++
      else if (res.status === 429) this.ledger.tally.rateLimited++
      else if (res.status >= 500) this.ledger.tally.server5xx.push(`${res.status} ${JSON.stringify(res.body)}`)
      else this.ledger.tally.refused4xx++
      return res
    } catch {
      this.ledger.tally.lost++
      return null
    }
  }
}

// ---------------------------------------------------------------- the journal, replayed from genesis

interface Model {
  readonly x: Exchange
  readonly hash: string
  readonly lastSeq: number
  readonly tornTail: TornTail | null
  /** `user:nonce` → the order id the engine gave (null: refused). */
  readonly placements: Map<string, number | null>
  /** Orders (user:nonce) journaled more than once: a retried or replayed request. */
  readonly duplicatePlacements: string[]
  readonly orders: Map<number, { user: string; size: number; filled: number; cancelled: string | null }>
  readonly fills: Map<number, FillEvent>
  readonly duplicateTrades: number[]
  /** Credit amount → user and how many records carry it. */
  readonly credits: Map<number, { user: string; count: number }>
  readonly creditTotal: number
}

/** Replays every record from seq 1, no snapshot, recording what each did. */
const replayFromGenesis = (dataDir: string): Model => {
  const x = new Exchange(() => 0, noSink)
  const placements = new Map<string, number | null>()
  const orders = new Map<number, { user: string; size: number; filled: number; cancelled: string | null }>()
  const fills = new Map<number, FillEvent>()
  const duplicateTrades: number[] = []
  const duplicatePlacements: string[] = []
  const credits = new Map<number, { user: string; count: number }>()
  let creditTotal = 0
  x.onApply((record, result) => {
    const cmd = record.cmd
    if (cmd.type === "credit") {
      const c = credits.get(cmd.amountMicro)
      credits.set(cmd.amountMicro, { user: cmd.user, count: (c?.count ?? 0) + 1 })
      if (result.events.some((e) => e.type === "credited")) creditTotal += cmd.amountMicro
    }
    if (cmd.type === "place_order") {
      const first = result.events[0]
      if (placements.has(`${cmd.order.user}:${cmd.order.nonce}`)) duplicatePlacements.push(`${cmd.order.user.slice(0, 6)}:${cmd.order.nonce}`)
      placements.set(`${cmd.order.user}:${cmd.order.nonce}`, first?.type === "order_accepted" ? first.orderId : null)
    }
    for (const ev of result.events) {
      if (ev.type === "order_accepted") orders.set(ev.orderId, { user: ev.user, size: ev.size, filled: 0, cancelled: null })
      else if (ev.type === "order_cancelled") orders.get(ev.orderId)!.cancelled = ev.reason
      else if (ev.type === "fill") {
        if (fills.has(ev.tradeId)) duplicateTrades.push(ev.tradeId)
        fills.set(ev.tradeId, ev)
        orders.get(ev.takerOrderId)!.filled += ev.size
        orders.get(ev.makerOrderId)!.filled += ev.size
      }
    }
  })
  const read = readJournal(journalDir(dataDir), 1, { repair: false })
  for (const r of read.records) x.apply(r)
  return { x, hash: exchangeHash(x), lastSeq: read.lastSeq, tornTail: read.tornTail, placements, duplicatePlacements, orders, fills, duplicateTrades, credits, creditTotal }
}

/** Acknowledgements against the journal: the part of the checks that needs no server. */
const checkJournal = (m: Model, ledger: Ledger, clients: ReadonlySet<string>): string[] => {
  const bad: string[] = []
  for (const o of ledger.orders) {
    const id = m.placements.get(`${o.user}:${o.nonce}`)
    if (id !== o.orderId) {
      bad.push(`acknowledged order ${o.orderId} (${o.user.slice(0, 6)} nonce ${o.nonce}) is ${id === undefined ? "not in the journal" : `journaled as ${id}`}`)
      continue
    }
    const info = m.orders.get(o.orderId)!
    if (info.user !== o.user || info.size !== o.size) bad.push(`order ${o.orderId}: journal has ${info.user.slice(0, 6)}/${info.size}`)
    for (const f of o.fills) {
      const j = m.fills.get(f.trade_id)
      if (j === undefined) bad.push(`acknowledged fill ${f.trade_id} of order ${o.orderId} is not in the journal`)
      else if (j.takerOrderId !== o.orderId || j.makerOrderId !== f.maker_order_id || j.makerUser !== f.maker || j.size !== f.size || j.takerPriceBps !== f.price) {
        bad.push(`fill ${f.trade_id}: acknowledged ${JSON.stringify(f)}, journal has taker order ${j.takerOrderId}, maker ${j.makerOrderId}, size ${j.size} @${j.takerPriceBps}`)
      }
    }
  }
  for (const c of ledger.cancels) {
    if (m.orders.get(c.orderId)?.cancelled !== "user") bad.push(`acknowledged cancel of order ${c.orderId} is not in the journal`)
  }
  if (m.duplicateTrades.length > 0) bad.push(`trade ids filled twice: ${m.duplicateTrades.join(", ")}`)
  if (m.duplicatePlacements.length > 0) bad.push(`orders journaled twice: ${m.duplicatePlacements.join(", ")}`)
  // Credits: every acknowledged one exactly once; the rest only if attempted, and once.
  for (const [amount, user] of ledger.creditsAcked) {
    const c = m.credits.get(amount)
    if (c === undefined) bad.push(`acknowledged credit ${amount} is not in the journal`)
    else if (c.user !== user) bad.push(`credit ${amount} went to another user`)
  }
  for (const [amount, c] of m.credits) {
    if (c.count !== 1) bad.push(`credit ${amount} journaled ${c.count} times`)
    if (ledger.creditsAttempted.get(amount) !== c.user) bad.push(`credit ${amount} to ${c.user.slice(0, 6)} was never sent`)
  }
  const acked = ledger.sum(ledger.creditsAcked)
  const attempted = ledger.sum(ledger.creditsAttempted)
  if (m.creditTotal < acked || m.creditTotal > attempted) bad.push(`credits in journal ${m.creditTotal} outside [acknowledged ${acked}, attempted ${attempted}]`)
  // Conservation inside the replayed engine (accounts + backing = net deposits), and every engine invariant.
  if (m.x.engine.netDepositsMicro !== m.creditTotal) bad.push(`engine net deposits ${m.x.engine.netDepositsMicro} != credits ${m.creditTotal}`)
  bad.push(...findViolations(m.x.engine))
  for (const user of m.x.engine.accounts.keys()) if (user !== FEE_ACCOUNT && !clients.has(user)) bad.push(`unexpected account ${user}`)
  return bad
}

// ---------------------------------------------------------------- the live server against the model

const getJson = async (t: ReturnType<typeof loopbackTransport>, path: string): Promise<any> => {
  const res = await t(`http://server${path}`, { method: "GET" })
  const text = await res.text()
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${text}`)
  return JSON.parse(text)
}

const allTrades = async (t: ReturnType<typeof loopbackTransport>, user: string): Promise<any[]> => {
  const out: any[] = []
  for (let offset = 0; ; offset += 200) {
    const page = await getJson(t, `/v1/trades/all/${user}?limit=200&offset=${offset}`)
    out.push(...page.trades)
    if (offset + 200 >= page.total) return out
  }
}

/** JSON with object keys sorted: equal values, equal text, whatever order their keys were built in. */
const canon = (v: unknown): string =>
  JSON.stringify(v, (_k, value: unknown) =>
    value !== null && typeof value === "object" && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value
  )

/** Fails with `what` if `p` has not settled within `ms` (a guard against a hang, never a wait). */
const within = <T>(p: Promise<T>, ms: number, what: string): Promise<T> => {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no result within ${ms} ms`)), ms)
    })
  ]).finally(() => clearTimeout(timer))
}

const checkLive = async (
  t: ReturnType<typeof loopbackTransport>,
  m: Model,
  ledger: Ledger,
  users: ReadonlyArray<string>,
  markets: ReadonlyArray<string>
): Promise<string[]> => {
  const bad: string[] = []
  const resting = new Map<number, { user: string; remaining: number }>()
  const trades = new Map<string, any[]>()
  let liveTotal = 0
  const yesHeld = new Map<string, number>()
  for (const user of users) {
    const u = user.slice(0, 6)
    const balance = await getJson(t, `/v1/balance/${user}`)
    if (canon(balance) !== canon(balanceView(m.x, user))) bad.push(`${u}: balance ${canon(balance)} != replay ${canon(balanceView(m.x, user))}`)
    liveTotal += balance.total
    const open = (await getJson(t, `/v1/orders/all/${user}`)).orders as Array<{ id: number; remaining: number }>
    if (canon(open) !== canon(openOrders(m.x, user))) bad.push(`${u}: open orders differ from the replay`)
    for (const o of open) resting.set(o.id, { user, remaining: o.remaining })
    const positions = (await getJson(t, `/v1/positions/all/${user}`)).positions as Array<{ market_id: string; yes: number }>
    if (canon(positions) !== canon(allPositions(m.x, user))) bad.push(`${u}: positions differ from the replay`)
    for (const p of positions) yesHeld.set(p.market_id, (yesHeld.get(p.market_id) ?? 0) + p.yes)
    const list = await allTrades(t, user)
    trades.set(user, list)
    const expected = m.x.history.userTrades(user, Number.MAX_SAFE_INTEGER, 0).trades
    if (canon(list) !== canon(expected)) {
      bad.push(`${u}: /v1/trades/all lists ${list.length} trades, the replay ${expected.length}`)
    }
    const ids = list.map((tr) => tr.id as number)
    if (new Set(ids).size !== ids.length) bad.push(`${u}: duplicate trade ids in /v1/trades/all`)
  }
  for (const market of markets) {
    const book = await getJson(t, `/v1/markets/${market}/book`)
    const want = bookView(m.x, market, 0)
    if (canon([book.bids, book.asks]) !== canon([want.bids, want.asks])) bad.push(`book of ${market.slice(0, 8)} differs from the replay`)
  }
  // Each trade is listed by exactly its maker and its taker, identically.
  const seen = new Map<number, { holders: string[]; text: string }>()
  for (const [user, list] of trades) {
    for (const tr of list) {
      const s = seen.get(tr.id) ?? { holders: [], text: canon(tr) }
      if (s.text !== canon(tr)) bad.push(`trade ${tr.id} differs between lists`)
      s.holders.push(user)
      seen.set(tr.id, s)
      if (tr.maker !== user && tr.taker !== user) bad.push(`trade ${tr.id} listed for ${user.slice(0, 6)}, neither maker nor taker`)
    }
  }
  for (const [id, s] of seen) {
    const tr = JSON.parse(s.text) as { maker: string; taker: string }
    const want = [...new Set([tr.maker, tr.taker])].sort()
    if (JSON.stringify(s.holders.sort()) !== JSON.stringify(want)) bad.push(`trade ${id} listed by ${s.holders.length} users`)
  }
  // Acknowledged orders: resting with the right remainder, or filled or cancelled in the journal.
  for (const o of ledger.orders) {
    const info = m.orders.get(o.orderId)
    if (info === undefined) continue // reported by checkJournal
    const live = resting.get(o.orderId)
    if (live !== undefined) {
      if (live.user !== o.user || live.remaining !== o.size - info.filled || info.cancelled !== null) {
        bad.push(`order ${o.orderId} rests with ${live.remaining} left, journal: ${info.filled} of ${o.size} filled, cancelled ${info.cancelled}`)
      }
    } else if (info.cancelled === null && info.filled !== o.size) {
      bad.push(`order ${o.orderId} is neither resting nor filled (${info.filled}/${o.size}) nor cancelled`)
    }
    for (const f of o.fills) {
      const holders = seen.get(f.trade_id)?.holders ?? []
      if (holders.filter((h) => h === o.user).length !== 1 || holders.filter((h) => h === f.maker).length !== 1) {
        bad.push(`acknowledged fill ${f.trade_id} is listed ${holders.length} times (taker ${o.user.slice(0, 6)}, maker ${f.maker.slice(0, 6)})`)
      }
    }
  }
  for (const c of ledger.cancels) if (resting.has(c.orderId)) bad.push(`cancelled order ${c.orderId} is resting`)
  for (const c of ledger.cancelAlls) for (const id of c.before) if (resting.has(id)) bad.push(`order ${id} rests after its owner's cancel-all`)
  // Money, from the live server: users' balances + the house + the backing of every
  // YES/NO pair held (1 USDC each, unresolved markets) = every credit journaled.
  let backing = 0
  for (const yes of yesHeld.values()) backing += yes * 1_000_000
  const house = m.x.engine.accounts.get(FEE_ACCOUNT)
  const held = liveTotal + (house === undefined ? 0 : house.availableMicro + house.lockedMicro) + backing
  if (held !== m.creditTotal) bad.push(`money: live balances ${liveTotal} + house + backing ${backing} = ${held} != credits ${m.creditTotal}`)
  return bad
}

// ---------------------------------------------------------------- the test

const dirs: string[] = []
const children: ChildServer[] = []
afterAll(() => {
  for (const c of children) c.kill("SIGKILL")
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const newestSnapshotSeq = (dataDir: string): number => {
  let names: string[] = []
  try {
    names = readdirSync(snapshotDir(dataDir))
  } catch {
    return 0
  }
  return Math.max(0, ...names.map((n) => /^snap-(\d{12})\.json$/.exec(n)).map((m) => (m === null ? 0 : Number(m[1]))))
}

/** Polls a condition (never a fixed sleep); fails after `ms`. */
const until = async (cond: () => boolean, ms: number, what: string): Promise<void> => {
  const deadline = Date.now() + ms // live-only: a guard against a hang
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`${what}: not seen within ${ms} ms`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** Appends what a write cut short by a crash leaves behind: part of a frame, or a whole frame with a bad checksum. */
const tearJournalTail = (dataDir: string, random: () => number): string => {
  const seg = listSegments(journalDir(dataDir)).at(-1)!.path
  const junk = Buffer.alloc(160)
  for (let i = 0; i < junk.length; i++) junk[i] = Math.floor(random() * 256)
  const kind = Math.floor(random() * 3)
  junk.writeUInt32LE(kind === 2 ? junk.length - HEADER_BYTES : 400, 0)
  const bytes = kind === 0 ? junk.subarray(0, 5) : junk
  appendFileSync(seg, bytes)
  return ["torn header", "torn record", "bad checksum"][kind]!
}

const waitReady = async (t: ReturnType<typeof loopbackTransport>): Promise<void> => {
  // The URL line is printed once the server listens; one read proves it answers.
  await getJson(t, "/v1/markets?limit=1")
}

describe("crash recovery of the real server", () => {
  it(`survives ${KILL_CYCLES} SIGKILLs at seeded points under load with every acknowledgement intact (seed ${SEED})`, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "twinbook-crash-"))
    dirs.push(dataDir)
    const random = prng(SEED)
    const live: { server: ChildServer | null } = { server: null }
    const target = (): string => live.server?.url ?? "http://127.0.0.1:9"
    const start = async (): Promise<ChildServer> => {
      const s = await startChildServer({ dataDir, env: { ADMIN_TOKEN, SNAPSHOT_INTERVAL_SEC: "1", DEV_CREDIT: "true" } })
      children.push(s)
      live.server = s
      for (const tr of traders) tr.transport.reset()
      checker.reset()
      await waitReady(checker)
      return s
    }
    const checker = loopbackTransport("127.0.0.2", target)
    // Two binary demo markets: every client trades in both, so orders meet.
    const markets = demoCatalog()
      .filter((e) => e.outcomes === undefined || e.outcomes.length === 0)
      .slice(0, 2)
      .map((e) => idFromSlug("market", e.slug))
    const ledger = new Ledger()
    const traders: Trader[] = Array.from(
      { length: CLIENTS },
      (_, i) => new Trader(i, loopbackTransport(`127.0.0.${10 + i}`, target), markets, ledger, Math.floor(random() * 2 ** 32))
    )
    const users = traders.map((tr) => tr.user)
    const clients = new Set(users)
    const log: string[] = []

    let server = await start()
    // Sessions and first deposits, all acknowledged before any kill.
    for (const tr of traders) {
      const reg = await tr.api.register(`crash-${tr.index}`)
      expect(reg.status).toBe(200)
      expect((await tr.credit(INITIAL_CREDIT + tr.index))?.status).toBe(200)
    }

    const verify = async (when: string, live: boolean): Promise<Model> => {
      const m = replayFromGenesis(dataDir)
      const problems = checkJournal(m, ledger, clients)
      // Recovery as the server does it (newest valid snapshot + the journal after it) = genesis replay.
      const recovered = recoverExchange(dataDir, () => 0, noSink, { repair: false })
      if (exchangeHash(recovered.exchange) !== m.hash) {
        problems.push(`snapshot ${recovered.recovery.snapshotSeq} + ${recovered.recovery.replayed} records hashes differently from the genesis replay`)
      }
      if (live) problems.push(...(await checkLive(checker, m, ledger, users, markets)))
      log.push(`${when}: seq ${m.lastSeq}, snapshot ${recovered.recovery.snapshotSeq}, ${m.fills.size} trades, torn tail ${m.tornTail?.problem ?? "none"}`)
      expect(problems, `${when}:\n  ${problems.slice(0, 20).join("\n  ")}`).toEqual([])
      return m
    }

    for (let cycle = 1; cycle <= KILL_CYCLES; cycle++) {
      const s = server
      // Even cycles hold the kill until the server has written a new snapshot, so
      // restarts recover from snapshot + journal tail as well as from the journal alone.
      const waitForSnapshot = cycle % 2 === 0
      const snapshotBefore = newestSnapshotSeq(dataDir)
      const c: Cycle = {
        acks: 0,
        // Seeded kill point, well inside what the rate-limit budgets allow.
        killAt: 80 + Math.floor(random() * 400),
        armed: !waitForSnapshot,
        stopped: false,
        kill: () => {
          if (c.stopped) return
          c.stopped = true
          s.kill("SIGKILL")
        }
      }
      const armed = waitForSnapshot
        ? until(() => newestSnapshotSeq(dataDir) > snapshotBefore, 15_000, "a snapshot under load").then(() => void (c.armed = true))
        : Promise.resolve()
      armed.catch(() => undefined) // awaited below; a timeout must not surface as unhandled meanwhile
      await Promise.all(traders.map((tr) => tr.run(c)))
      // Every client ran out of budget before the kill point: kill the idle server (once armed).
      await armed
      c.kill()
      const exit = await within(s.exited, 20_000, "SIGKILLed server exit")
      expect(exit.signal).toBe("SIGKILL")
      // Seeded: half the kills also leave a torn write at the journal's end (bytes of
      // an unacknowledged batch), which the restart must cut away.
      const torn = random() < 0.5 ? tearJournalTail(dataDir, random) : "none"
      log.push(`cycle ${cycle}: killed at ${c.acks} acknowledgements (kill point ${c.killAt}${waitForSnapshot ? ", after a snapshot" : ""}); torn tail added: ${torn}`)
      await verify(`after kill ${cycle}, on disk`, false)
      server = await start()
      log.push(`  restart: ${server.lines.filter((l) => /^(data dir|journal tail|history store|snapshot skipped)/.test(l)).map((l) => l.replace(/\s+/g, " ")).join(" | ")}`)
      const m = await verify(`after restart ${cycle}`, true)
      expect(m.tornTail, "the restarted server cut the torn tail").toBeNull()
    }

    // A clean stop (SIGTERM: final snapshot, history flushed) and one more start.
    server.kill("SIGTERM")
    expect((await within(server.exited, 30_000, "clean stop")).signal).toBeNull()
    const m = await verify("after a clean stop, on disk", false)
    const clean = recoverExchange(dataDir, () => 0, noSink, { repair: false })
    expect(clean.recovery.tornTail).toBeNull()
    expect(clean.recovery.snapshotSeq).toBe(m.lastSeq)
    server = await start()
    await verify("after the final restart", true)
    server.kill("SIGKILL")
    await server.exited
    for (const tr of traders) tr.transport.close()
    checker.close()

    // The load must have been real: fills, resting orders, cancels and credits lost to kills.
    const fills = ledger.orders.reduce((n, o) => n + o.fills.length, 0)
    log.push(`tally ${JSON.stringify({ ...ledger.tally, server5xx: ledger.tally.server5xx.length, orders: ledger.orders.length, fills, cancels: ledger.cancels.length, cancelAlls: ledger.cancelAlls.length, creditsAcked: ledger.creditsAcked.size, creditsAttempted: ledger.creditsAttempted.size })}`)
    console.log(`crash test (seed ${SEED}):\n  ${log.join("\n  ")}`)
    expect(ledger.tally.server5xx).toEqual([])
    expect(fills).toBeGreaterThan(50)
    expect(ledger.orders.length).toBeGreaterThan(200)
    expect(ledger.tally.lost).toBeGreaterThan(0)
  }, 600_000) // a hang detector: five starts of the real server took 143 s beside two CPU hogs
})
