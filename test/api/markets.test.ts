// GET /v1/markets (every parameter), GET /v1/markets/{id}, POST /v1/events,
// the book and the market trade list, over real HTTP against the demo catalogue.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { adminPost, cross, expectError, get, manyTrades, ok, place, req } from "../support/reads.ts"
import { startTestServer, type TestServer } from "../support/server.ts"

const MARKET_COLUMNS = [
  "event_id",
  "question",
  "status",
  "category",
  "slug",
  "image",
  "description",
  "tags",
  "expiry",
  "end_date",
  "fee_bps",
  "volume",
  "neg_risk",
  "outcomes",
  "resolution_metadata",
  "resolution_source"
]

/** Demo catalogue: slug → expiry (fixtures/catalog.json). */
const EXPIRY: Record<string, number> = {
  "btc-above-120k-2027-03-31": 1806451200,
  "eth-above-6k-2027-h1": 1814313600,
  "sol-flips-bnb-2027": 1830211200,
  "doge-1-dollar-2027": 1830211200,
  "btc-range-2027-03-31": 1806451200,
  "ucl-final-2027-winner": 1811808000,
  "g7-2027-prediction-markets": 1814313600,
  "phone-film-oscar-2027": 1804032000,
  "xrp-above-3-end-2026": 1798761600,
  "bnb-above-1000-end-2026": 1798761600
}
const ALL_SLUGS = Object.keys(EXPIRY)

const slugsOf = (body: any): string[] => body.markets.map((m: any) => m.slug)
const sorted = (xs: string[]): string[] => [...xs].sort()

describe("GET /v1/markets filters and ordering (demo catalogue)", () => {
  let t: TestServer
  /** event_id by slug, read once from the service. */
  const ids: Record<string, string> = {}
  const list = (query = ""): Promise<any> => ok(t, `/v1/markets${query}`)

  beforeAll(async () => {
    t = await startTestServer()
    for (const m of (await list()).markets) ids[m.slug] = m.event_id
  })
  afterAll(() => t.close())

  it("defaults: status active, order volume descending (ties by event_id), limit 500, offset 0, every spec column", async () => {
    const body = await list()
    expect(body.total).toBe(10)
    expect(body.limit).toBe(500)
    expect(body.offset).toBe(0)
    expect(body.markets).toHaveLength(10)
    expect(sorted(slugsOf(body))).toEqual(sorted(ALL_SLUGS))
    for (const m of body.markets) {
      for (const col of MARKET_COLUMNS) expect(m, `${m.slug} lacks ${col}`).toHaveProperty(col)
      expect(m.status).toBe("active")
      expect(m.volume).toBe(0)
      expect(m.expiry).toBe(EXPIRY[m.slug])
      expect(m.event_id).toMatch(/^[0-9a-f]{64}$/)
    }
    // Every volume is 0, so the order is the event_id tie-break.
    const eventIds = body.markets.map((m: any) => m.event_id)
    expect(eventIds).toEqual([...eventIds].sort())
  })

  it("category is a case-insensitive exact match; there is no aggregate crypto category", async () => {
    const btc = sorted(["btc-above-120k-2027-03-31", "btc-range-2027-03-31"])
    for (const c of ["BTC", "btc", "Btc"]) {
      const body = await list(`?category=${c}`)
      expect(sorted(slugsOf(body))).toEqual(btc)
      expect(body.total).toBe(2)
    }
    expect(await list("?category=crypto")).toEqual({ markets: [], total: 0, limit: 500, offset: 0 })
    expect((await list("?category=bt")).total).toBe(0)
    expect(slugsOf(await list("?category=sports"))).toEqual(["ucl-final-2027-winner"])
    expect(slugsOf(await list("?category=POLITICS"))).toEqual(["g7-2027-prediction-markets"])
  })

  it("search is a substring match on the question", async () => {
    expect(sorted(slugsOf(await list("?search=BTC")))).toEqual(sorted(["btc-above-120k-2027-03-31", "btc-range-2027-03-31"]))
    expect(sorted(slugsOf(await list("?search=above")))).toEqual(
      sorted(["btc-above-120k-2027-03-31", "eth-above-6k-2027-h1", "xrp-above-3-end-2026", "bnb-above-1000-end-2026"])
    )
    expect(slugsOf(await list(`?search=${encodeURIComponent("2027 G7 summit")}`))).toEqual(["g7-2027-prediction-markets"])
    // twinbook matches case-insensitively.
    expect((await list("?search=btc")).total).toBe(2)
    expect((await list("?search=nothing-like-this")).total).toBe(0)
    // Only the question: "crypto" is a tag, not in any question.
    expect((await list("?search=crypto")).total).toBe(0)
  })

  it("ends_before / ends_after are strict unix-second bounds on expiry", async () => {
    expect(sorted(slugsOf(await list("?ends_before=1806451200")))).toEqual(
      sorted(["xrp-above-3-end-2026", "bnb-above-1000-end-2026", "phone-film-oscar-2027"])
    )
    expect((await list("?ends_before=1806451201")).total).toBe(5)
    expect(sorted(slugsOf(await list("?ends_after=1806451200")))).toEqual(
      sorted(["ucl-final-2027-winner", "eth-above-6k-2027-h1", "g7-2027-prediction-markets", "sol-flips-bnb-2027", "doge-1-dollar-2027"])
    )
    expect(sorted(slugsOf(await list("?ends_after=1804032000&ends_before=1811808000")))).toEqual(
      sorted(["btc-above-120k-2027-03-31", "btc-range-2027-03-31"])
    )
    expect((await list("?ends_before=1798761600")).total).toBe(0)
    expect((await list("?ends_after=1830211200")).total).toBe(0)
  })

  it("neg_risk true / false", async () => {
    const yes = await list("?neg_risk=true")
    expect(sorted(slugsOf(yes))).toEqual(sorted(["btc-range-2027-03-31", "ucl-final-2027-winner"]))
    for (const m of yes.markets) expect(m.neg_risk).toBe(true)
    const no = await list("?neg_risk=false")
    expect(no.total).toBe(8)
    for (const m of no.markets) expect(m.neg_risk).toBe(false)
  })

  it("order=expiry defaults to ascending; ascending=false reverses; ties break on event_id", async () => {
    const asc = await list("?order=expiry")
    const expected = [...ALL_SLUGS].sort((a, b) => EXPIRY[a]! - EXPIRY[b]! || (ids[a]! < ids[b]! ? -1 : 1))
    expect(slugsOf(asc)).toEqual(expected)
    expect(slugsOf(await list("?order=expiry&ascending=true"))).toEqual(expected)
    const desc = await list("?order=expiry&ascending=false")
    const expectedDesc = [...ALL_SLUGS].sort((a, b) => EXPIRY[b]! - EXPIRY[a]! || (ids[a]! < ids[b]! ? -1 : 1))
    expect(slugsOf(desc)).toEqual(expectedDesc)
    expect(desc.markets[0].expiry).toBe(1830211200)
    expect(asc.markets[0].expiry).toBe(1798761600)
  })

  it("order must be volume, expiry or created_at: anything else is 400 invalid_order", async () => {
    for (const o of ["price", "Volume", "", "expiry;drop"]) {
      expectError(await get(t, `/v1/markets?order=${encodeURIComponent(o)}`), 400, "invalid_order")
    }
    expect((await list("?order=created_at")).total).toBe(10)
    expect((await list("?order=volume")).total).toBe(10)
  })

  it("malformed integers and booleans are 400 invalid_query", async () => {
    for (const q of [
      "limit=abc",
      "limit=1.5",
      "limit=-1",
      "offset=-1",
      "offset=x",
      "ends_before=soon",
      "ends_after=1e9",
      "neg_risk=yes",
      "neg_risk=1",
      "ascending=TRUE",
      "ascending=0",
      "status=open"
    ]) {
      expectError(await get(t, `/v1/markets?${q}`), 400, "invalid_query")
    }
  })

  it("limit is capped at 500; offset pages; total is the filtered grand total; small pages have no gaps or duplicates", async () => {
    const all = slugsOf(await list())
    expect((await list("?limit=1000")).limit).toBe(500)
    expect((await list("?limit=1000")).markets).toHaveLength(10)
    for (const size of [1, 3, 4, 7]) {
      const seen: string[] = []
      for (let offset = 0; ; ) {
        const page = await list(`?limit=${size}&offset=${offset}`)
        expect(page.total).toBe(10)
        expect(page.limit).toBe(size)
        expect(page.offset).toBe(offset)
        expect(page.markets.length).toBe(Math.min(size, 10 - offset))
        seen.push(...slugsOf(page))
        offset += page.markets.length
        if (offset >= page.total) break
      }
      expect(seen).toEqual(all)
    }
    // Filtered: the total counts the filter, not the page.
    const page = await list("?neg_risk=false&limit=3&offset=6")
    expect(page.total).toBe(8)
    expect(page.markets).toHaveLength(2)
    expect(await list("?offset=10")).toEqual({ markets: [], total: 10, limit: 500, offset: 10 })
  })

  it("status: halting a market moves it from active to halted; resolving moves it to resolved; an event is active while any outcome is", async () => {
    const phone = ids["phone-film-oscar-2027"]!
    expect((await adminPost(t, `/v1/admin/markets/${phone}/status`, { status: "halted" })).status).toBe(200)
    t.advance(30_000) // the list is edge-cached for 30 s
    const active = await list()
    expect(active.total).toBe(9)
    expect(slugsOf(active)).not.toContain("phone-film-oscar-2027")
    const halted = await list("?status=halted")
    expect(slugsOf(halted)).toEqual(["phone-film-oscar-2027"])
    expect(halted.markets[0].status).toBe("halted")
    expect((await list("?status=resolved")).total).toBe(0)

    // One outcome of a multi-outcome event halted: the event is still active.
    const ucl = await ok(t, "/v1/markets/ucl-final-2027-winner")
    const first = ucl.outcomes[0].market_id
    expect((await adminPost(t, `/v1/admin/markets/${first}/status`, { status: "halted" })).status).toBe(200)
    expect((await adminPost(t, `/v1/admin/markets/${phone}/status`, { status: "resolved", winning_outcome: "no" })).status).toBe(200)
    t.advance(30_000)
    expect((await list()).total).toBe(9)
    expect(slugsOf(await list("?status=halted"))).toEqual([])
    const resolved = await list("?status=resolved")
    expect(slugsOf(resolved)).toEqual(["phone-film-oscar-2027"])
    expect(resolved.markets[0].outcomes[0]).toMatchObject({ market_id: phone, status: "resolved", winning_outcome: "no" })
    const uclNow = await ok(t, "/v1/markets/ucl-final-2027-winner")
    expect(uclNow.status).toBe("active")
    expect(uclNow.outcomes.map((o: any) => o.status)).toEqual(["halted", "active", "active", "active"])

    // Every outcome halted: the event is halted; resumed: active again.
    for (const o of ucl.outcomes.slice(1)) expect((await adminPost(t, `/v1/admin/markets/${o.market_id}/status`, { status: "halted" })).status).toBe(200)
    t.advance(30_000)
    expect(slugsOf(await list("?status=halted"))).toEqual(["ucl-final-2027-winner"])
    expect((await list()).total).toBe(8)
    for (const o of ucl.outcomes) expect((await adminPost(t, `/v1/admin/markets/${o.market_id}/status`, { status: "active" })).status).toBe(200)
    t.advance(30_000)
    expect((await list()).total).toBe(9)
  })
})

describe("order=volume and order=created_at follow trading and creation", () => {
  let t: TestServer
  beforeAll(async () => {
    t = await startTestServer()
  })
  afterAll(() => t.close())

  it("volume is the taker notional in micro-USDC, summed over an event's outcomes; ascending=true reverses", async () => {
    const maker = await t.funded("vol-maker")
    const taker = await t.funded("vol-taker")
    // g7: a NO-side fill, 10 contracts at NO 4000: 10 · 4000 · 100 = 4,000,000 micro.
    await cross(maker, taker, t.market("g7-2027-prediction-markets"), 6_000, 10, "no")
    // phone film: 5 contracts bought YES at 3000: 1,500,000 micro.
    await cross(maker, taker, t.market("phone-film-oscar-2027"), 3_000, 5, "yes")
    // UCL: 50 YES at 2000 on one outcome and 10 YES at 1000 on another: 10,000,000 + 1,000,000.
    const ucl = await ok(t, "/v1/markets/ucl-final-2027-winner")
    await cross(maker, taker, ucl.outcomes[0].market_id, 2_000, 50, "yes")
    await cross(maker, taker, ucl.outcomes[3].market_id, 1_000, 10, "yes")

    const desc = await ok(t, "/v1/markets?order=volume")
    expect(desc.markets.slice(0, 3).map((m: any) => [m.slug, m.volume])).toEqual([
      ["ucl-final-2027-winner", 11_000_000],
      ["g7-2027-prediction-markets", 4_000_000],
      ["phone-film-oscar-2027", 1_500_000]
    ])
    const asc = await ok(t, "/v1/markets?order=volume&ascending=true")
    expect(asc.markets.slice(7).map((m: any) => m.slug)).toEqual(["phone-film-oscar-2027", "g7-2027-prediction-markets", "ucl-final-2027-winner"])
    // The zero-volume rest keeps the event_id tie-break in both directions.
    const restIds = asc.markets.slice(0, 7).map((m: any) => m.event_id)
    expect(restIds).toEqual([...restIds].sort())
    expect(desc.markets.slice(3).map((m: any) => m.event_id)).toEqual(restIds)
  })

  it("created_at orders by creation time, newest first unless ascending", async () => {
    const base = { category: "Culture", expiry: 1_900_000_000 }
    t.advance(10_000)
    expect((await adminPost(t, "/v1/events", { ...base, question: "Created second to last?", slug: "created-a" })).status).toBe(200)
    t.advance(10_000)
    const b = await adminPost(t, "/v1/events", { ...base, question: "Created last?", slug: "created-b" })
    expect(b.status).toBe(200)
    expect(b.body.created_at).toBe(t.nowSec())
    const desc = await ok(t, "/v1/markets?order=created_at")
    expect(desc.total).toBe(12)
    expect(slugsOf(desc).slice(0, 2)).toEqual(["created-b", "created-a"])
    const asc = await ok(t, "/v1/markets?order=created_at&ascending=true")
    expect(slugsOf(asc).slice(10)).toEqual(["created-a", "created-b"])
    // The demo events were created together, at the start: event_id breaks the tie.
    const demoIds = asc.markets.slice(0, 10).map((m: any) => m.event_id)
    expect(demoIds).toEqual([...demoIds].sort())
  })
})

describe("GET /v1/markets with more than one page of 500", () => {
  let t: TestServer
  beforeAll(async () => {
    t = await startTestServer()
    // 501 more events: 511 in all. One per test-clock second keeps the operator limit (60 / 60 s) happy.
    for (let i = 0; i < 501; i++) {
      const res = await adminPost(t, "/v1/events", { question: `Bulk question ${i}?`, category: "Sports", slug: `bulk-${i}`, expiry: 1_900_000_000 + i })
      if (res.status !== 200) throw new Error(`create bulk-${i}: ${res.status} ${res.text}`)
      t.advance(1_000)
    }
  })
  afterAll(() => t.close())

  it("limit defaults to 500 and never exceeds it; paging with offset reaches every event exactly once", async () => {
    const first = await ok(t, "/v1/markets")
    expect(first).toMatchObject({ total: 511, limit: 500, offset: 0 })
    expect(first.markets).toHaveLength(500)
    const capped = await ok(t, "/v1/markets?limit=501")
    expect(capped.limit).toBe(500)
    expect(capped.markets).toHaveLength(500)
    const rest = await ok(t, "/v1/markets?offset=500")
    expect(rest).toMatchObject({ total: 511, limit: 500, offset: 500 })
    expect(rest.markets).toHaveLength(11)

    const seen: string[] = []
    for (let offset = 0; ; ) {
      const page = await ok(t, `/v1/markets?order=expiry&limit=128&offset=${offset}`)
      expect(page.total).toBe(511)
      seen.push(...slugsOf(page))
      offset += page.markets.length
      if (offset >= page.total) break
    }
    expect(seen).toHaveLength(511)
    expect(new Set(seen).size).toBe(511)
    const expiries = [...seen.filter((s) => s.startsWith("bulk-"))].map((s) => Number(s.slice(5)))
    expect(expiries).toEqual(expiries.map((_, i) => i))

    const sports = await ok(t, "/v1/markets?category=sports&limit=2&offset=100")
    expect(sports.total).toBe(502)
    expect(sports.markets).toHaveLength(2)
  })
})

describe("GET /v1/markets/{id} and POST /v1/events", () => {
  let t: TestServer
  beforeAll(async () => {
    t = await startTestServer()
  })
  afterAll(() => t.close())

  it("addresses an event by event_id or slug; anything else is 404 not_found", async () => {
    const bySlug = await ok(t, "/v1/markets/btc-above-120k-2027-03-31")
    const byId = await ok(t, `/v1/markets/${bySlug.event_id}`)
    expect(byId).toEqual(bySlug)
    expect(bySlug).toMatchObject({
      slug: "btc-above-120k-2027-03-31",
      question: "Will BTC close above $120,000 on 2027-03-31?",
      category: "BTC",
      status: "active",
      expiry: 1806451200,
      end_date: 1806451200,
      fee_bps: 10,
      volume: 0,
      neg_risk: false,
      tags: ["crypto", "price"],
      resolution_source: "Coinbase BTC-USD daily close"
    })
    // A binary event is its own market.
    expect(bySlug.outcomes).toHaveLength(1)
    expect(bySlug.outcomes[0].market_id).toBe(bySlug.event_id)
    // Ids in any case, with or without 0x.
    expect((await ok(t, `/v1/markets/0x${bySlug.event_id.toUpperCase()}`)).event_id).toBe(bySlug.event_id)

    for (const id of ["nope", "btc-above-120k", "0".repeat(64), "%E2%9C%93"]) expectError(await get(t, `/v1/markets/${id}`), 404, "not_found")
  })

  it("a multi-outcome event lists a distinct tradable market_id per outcome", async () => {
    const ucl = await ok(t, "/v1/markets/ucl-final-2027-winner")
    expect(ucl).toMatchObject({ neg_risk: true, category: "Sports", fee_bps: 20, status: "active" })
    expect(ucl.outcomes.map((o: any) => o.label)).toEqual(["Real Madrid", "Manchester City", "Bayern Munich", "Other"])
    const marketIds = ucl.outcomes.map((o: any) => o.market_id)
    for (const id of marketIds) expect(id).toMatch(/^[0-9a-f]{64}$/)
    expect(new Set([...marketIds, ucl.event_id]).size).toBe(5)
    expect((await ok(t, `/v1/markets/${ucl.event_id}`)).slug).toBe("ucl-final-2027-winner")
    expect((await ok(t, `/v1/markets/${ucl.event_id.toUpperCase()}`)).slug).toBe("ucl-final-2027-winner")
    // Extension: an outcome's market id or slug answers with its event.
    expect((await ok(t, `/v1/markets/${marketIds[2]}`)).event_id).toBe(ucl.event_id)
    expect((await ok(t, "/v1/markets/btc-range-2027-03-31-gt-120k")).slug).toBe("btc-range-2027-03-31")
  })

  it("POST /v1/events creates a binary event; it is readable at once (a 404 is never cached)", async () => {
    expectError(await get(t, "/v1/markets/will-it-snow"), 404, "not_found")
    const res = await adminPost(t, "/v1/events", {
      question: "Will it snow in Lisbon in 2027?",
      category: "Culture",
      slug: "will-it-snow",
      expiry: 1_830_000_000,
      fee_bps: 15,
      tags: ["weather"]
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      question: "Will it snow in Lisbon in 2027?",
      category: "Culture",
      slug: "will-it-snow",
      status: "active",
      expiry: 1_830_000_000,
      end_date: 1_830_000_000,
      fee_bps: 15,
      volume: 0,
      neg_risk: false,
      tags: ["weather"],
      image: "",
      description: "",
      resolution_source: "",
      resolution_metadata: {}
    })
    expect(res.body.outcomes).toHaveLength(1)
    expect(res.body.outcomes[0].market_id).toBe(res.body.event_id)
    for (const col of MARKET_COLUMNS) expect(res.body).toHaveProperty(col)
    expect(await ok(t, "/v1/markets/will-it-snow")).toEqual(res.body)
    expect((await ok(t, "/v1/markets?search=Lisbon")).markets.map((m: any) => m.slug)).toEqual(["will-it-snow"])
  })

  it("POST /v1/events creates a multi-outcome event whose outcome markets trade", async () => {
    const res = await adminPost(t, "/v1/events", {
      question: "Who wins the 2027 chess final?",
      category: "Sports",
      slug: "chess-final-2027",
      expiry: 1_830_000_000,
      end_date: 1_830_086_400,
      neg_risk: true,
      outcomes: [{ label: "White" }, { label: "Black", slug: "chess-black" }, { label: "Draw" }]
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ slug: "chess-final-2027", neg_risk: true, status: "active", end_date: 1_830_086_400, fee_bps: 0 })
    expect(res.body.outcomes.map((o: any) => [o.label, o.slug])).toEqual([
      ["White", "chess-final-2027-white"],
      ["Black", "chess-black"],
      ["Draw", "chess-final-2027-draw"]
    ])
    const ids = res.body.outcomes.map((o: any) => o.market_id)
    expect(new Set([...ids, res.body.event_id]).size).toBe(4)

    const maker = await t.funded("chess-maker")
    await place(maker, { market_id: ids[1], side: "buy", outcome: "yes", price: 3_000, size: 2 })
    const book = await ok(t, `/v1/markets/${ids[1]}/book`)
    expect(book).toMatchObject({ market_id: ids[1], bids: [{ price: 3_000, size: 2 }], asks: [] })
    expect((await ok(t, "/v1/markets/chess-black/book")).market_id).toBe(ids[1])
    // The bare event id of a multi-outcome event is not tradable.
    expectError(await maker.placeOrder({ market_id: res.body.event_id, side: "buy", outcome: "yes", price: 3_000, size: 2 }), 404, "not_found")
  })

  it("409 event_exists on a duplicate slug (an event's or an outcome's)", async () => {
    const base = { question: "Duplicate?", category: "Politics", expiry: 1_830_000_000 }
    expectError(await adminPost(t, "/v1/events", { ...base, slug: "btc-above-120k-2027-03-31" }), 409, "event_exists")
    expectError(await adminPost(t, "/v1/events", { ...base, slug: "ucl-final-2027-winner", outcomes: [{ label: "A" }, { label: "B" }] }), 409, "event_exists")
    expectError(await adminPost(t, "/v1/events", { ...base, slug: "btc-range-2027-03-31-lt-80k" }), 409, "event_exists")
    expectError(await adminPost(t, "/v1/events", { ...base, slug: "fresh-slug", outcomes: [{ label: "A", slug: "chess-black" }, { label: "B" }] }), 409, "event_exists")
    expectError(await get(t, "/v1/markets/fresh-slug"), 404, "not_found")
  })

  it("400 invalid_shape for a malformed event; 400 invalid_json for a non-JSON body; 401 without the token", async () => {
    const good = { question: "Shape?", category: "Politics", slug: "shape-ok", expiry: 1_830_000_000 }
    const bad: unknown[] = [
      { ...good, question: undefined },
      { ...good, question: "" },
      { ...good, category: "Crypto" },
      { ...good, category: "btc" },
      { ...good, slug: "Bad Slug" },
      { ...good, slug: undefined },
      { ...good, expiry: -1 },
      { ...good, expiry: "soon" },
      { ...good, fee_bps: 1_001 },
      { ...good, neg_risk: "yes" },
      { ...good, outcomes: [{ label: "Only one" }] },
      { ...good, outcomes: [{ label: "Same" }, { label: "Same" }] },
      { ...good, outcomes: [{ label: "A" }, { label: "" }] },
      { ...good, outcomes: "A, B" }
    ]
    for (const body of bad) expectError(await adminPost(t, "/v1/events", body), 400, "invalid_shape")
    // Not JSON, or JSON that is not an object: invalid_json.
    for (const body of ["{not json", "a string", "", "null", JSON.stringify([good])]) expectError(await adminPost(t, "/v1/events", body), 400, "invalid_json")
    expectError(await req(t, "POST", "/v1/events", { body: good }), 401, "unauthorized")
    expectError(await req(t, "POST", "/v1/events", { body: good, headers: { authorization: "Bearer wrong-token" } }), 401, "unauthorized")
    expectError(await get(t, "/v1/markets/shape-ok"), 404, "not_found")
    expect((await adminPost(t, "/v1/events", good)).status).toBe(200)
  })

  it("fee_bps follows an operator fee change", async () => {
    const btc = t.market("btc-above-120k-2027-03-31")
    expect((await adminPost(t, "/v1/admin/fees", { market_id: btc, taker_fee_bps: 25 })).status).toBe(200)
    t.advance(30_000)
    expect((await ok(t, "/v1/markets/btc-above-120k-2027-03-31")).fee_bps).toBe(25)
    const ucl = await ok(t, "/v1/markets/ucl-final-2027-winner")
    expect((await adminPost(t, "/v1/admin/fees", { market_id: ucl.outcomes[1].market_id, taker_fee_bps: 40 })).status).toBe(200)
    t.advance(30_000)
    // Outcomes now differ (20, 40, 20, 20): the event shows the highest.
    expect((await ok(t, "/v1/markets/ucl-final-2027-winner")).fee_bps).toBe(40)
  })
})

describe("GET /v1/markets/{id}/book", () => {
  let t: TestServer
  beforeAll(async () => {
    t = await startTestServer()
  })
  afterAll(() => t.close())

  it("aggregates levels {price, size} in YES terms, bids and asks best first, ts in ms from the clock", async () => {
    const market = t.market("sol-flips-bnb-2027")
    const [a, b, c] = [await t.funded("book-a"), await t.funded("book-b"), await t.funded("book-c")]
    await place(a, { market_id: market, side: "buy", outcome: "yes", price: 5_000, size: 3 })
    await place(b, { market_id: market, side: "buy", outcome: "yes", price: 5_000, size: 2 })
    await place(c, { market_id: market, side: "buy", outcome: "yes", price: 4_800, size: 1 })
    await place(a, { market_id: market, side: "buy", outcome: "yes", price: 4_900, size: 7 })
    // Buying NO at q rests as a YES ask at 10000 − q.
    await place(a, { market_id: market, side: "buy", outcome: "no", price: 4_000, size: 4 })
    await place(b, { market_id: market, side: "buy", outcome: "no", price: 4_500, size: 2 })
    await place(c, { market_id: market, side: "buy", outcome: "no", price: 4_500, size: 1 })
    await place(c, { market_id: market, side: "buy", outcome: "no", price: 3_000, size: 9 })
    t.advance(1_234)

    const res = await get(t, `/v1/markets/${market}/book`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      market_id: market,
      bids: [
        { price: 5_000, size: 5 },
        { price: 4_900, size: 7 },
        { price: 4_800, size: 1 }
      ],
      asks: [
        { price: 5_500, size: 3 },
        { price: 6_000, size: 4 },
        { price: 7_000, size: 9 }
      ],
      ts: t.nowMs
    })
    // By slug: the same book under the market id.
    expect(await ok(t, "/v1/markets/sol-flips-bnb-2027/book")).toEqual(res.body)

    // A fill takes the best ask first; the next read (after the 1 s cache) shows it.
    const d = await t.funded("book-d")
    await place(d, { market_id: market, side: "buy", outcome: "yes", price: 6_000, size: 5 })
    t.advance(1_000)
    const after = await ok(t, `/v1/markets/${market}/book`)
    expect(after.asks).toEqual([
      { price: 6_000, size: 2 },
      { price: 7_000, size: 9 }
    ])
    expect(after.ts).toBe(t.nowMs)
  })

  it("an unknown id gets an empty book with 200, never a 5xx", async () => {
    for (const id of ["nope", "0".repeat(64), "ucl-final-2027-winner", "%F0%9F%92%A5"]) {
      const res = await get(t, `/v1/markets/${id}/book`)
      expect(res.status).toBe(200)
      expect(res.body).toEqual({ market_id: decodeURIComponent(id), bids: [], asks: [], ts: t.nowMs })
    }
    const quiet = t.market("doge-1-dollar-2027")
    expect(await ok(t, `/v1/markets/${quiet}/book`)).toEqual({ market_id: quiet, bids: [], asks: [], ts: t.nowMs })
  })
})

describe("GET /v1/markets/{id}/trades", () => {
  let t: TestServer
  let maker: Awaited<ReturnType<TestServer["funded"]>>
  let taker: Awaited<ReturnType<TestServer["funded"]>>
  let first: number
  const market = () => t.market("btc-above-120k-2027-03-31")

  beforeAll(async () => {
    t = await startTestServer()
    maker = await t.funded("trades-maker")
    taker = await t.funded("trades-taker")
    ;({ first } = await manyTrades(t, maker, taker, market(), 205))
    t.advance(3_000)
  })
  afterAll(() => t.close())

  it("limit defaults to 50, newest first, with every Trade field and the grand total", async () => {
    const body = await ok(t, `/v1/markets/${market()}/trades`)
    expect(body.total).toBe(205)
    expect(body.trades).toHaveLength(50)
    expect(body.trades.map((x: any) => x.id)).toEqual(Array.from({ length: 50 }, (_, i) => 205 - i))
    body.trades.forEach((trade: any, i: number) => {
      expect(trade).toMatchObject({
        id: 205 - i,
        // The taker bought YES at 5000 against a resting buy NO at 5000.
        price: 5_000,
        size: 1,
        side: "buy",
        time: first + 2 * (204 - i),
        market_id: market(),
        maker: maker.user,
        taker: taker.user,
        // ceil(1 · 5000 · 10 bps / 100) micro
        fee: 500,
        builder_fee: 0
      })
    })
  })

  it("limit is at most 200 (500 gives 200); smaller limits are honoured; bad limits are 400 invalid_query", async () => {
    const capped = await ok(t, `/v1/markets/${market()}/trades?limit=500`)
    expect(capped.trades).toHaveLength(200)
    expect(capped.total).toBe(205)
    expect(capped.trades[0].id).toBe(205)
    expect(capped.trades[199].id).toBe(6)
    expect((await ok(t, `/v1/markets/${market()}/trades?limit=200`)).trades).toHaveLength(200)
    expect((await ok(t, `/v1/markets/${market()}/trades?limit=7`)).trades.map((x: any) => x.id)).toEqual([205, 204, 203, 202, 201, 200, 199])
    // By slug too.
    expect((await ok(t, "/v1/markets/btc-above-120k-2027-03-31/trades?limit=1")).trades[0].id).toBe(205)
    for (const q of ["limit=0", "limit=-5", "limit=ten", "limit=2.5"]) expectError(await get(t, `/v1/markets/${market()}/trades?${q}`), 400, "invalid_query")
  })

  it("a market with no trades has an empty list; an unknown market is 404", async () => {
    expect(await ok(t, `/v1/markets/${t.market("doge-1-dollar-2027")}/trades`)).toEqual({ trades: [], total: 0 })
    expectError(await get(t, "/v1/markets/nope/trades"), 404, "not_found")
  })
})
