// The web app in a real Chromium against the real service and a real Anvil (test/web/harness.ts).
// One person's journeys, in order, in one browser page: sign up → faucet deposit credited →
// an order placed and cancelled in the book; the in-browser bot (Simple) quoting both sides,
// pausing when another user's fills leave it one-sided, Stop & Withdraw; an Advanced form with a
// bad field; the server-managed bot; a withdrawal confirmed on chain; trading closed → banner →
// the bot resumes. Each journey saves desktop and phone screenshots under out/web/.
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { ApiClient } from "../../src/client/api-client.ts"
import { admin, getJson, nodeTrader, screenshots, type Stand, startStand, waitFor } from "./harness.ts"

let stand: Stand
let page: Page
let marketId: string
/** A second market for journey 6, so the inventory journey 2 left does not pause that bot. */
let marketId2: string
let user: string
let maker: ApiClient
let taker: ApiClient
const pageErrors: string[] = []

/** Waits until the element's text contains `part`; fails with the text it had. */
const hasText = async (locator: ReturnType<Page["getByTestId"]>, part: string): Promise<void> => {
  let last = ""
  try {
    await waitFor(`text "${part}"`, async () => ((last = (await locator.first().textContent({ timeout: 5_000 })) ?? "").includes(part) ? true : undefined), 10_000, 100)
  } catch {
    expect(last).toContain(part)
  }
}
const text = async (testid: string): Promise<string> => (await page.getByTestId(testid).first().textContent()) ?? ""
const botState = (): Promise<{ state: string; quotes: { side: string; outcome: string }[]; requotesAtMs: number[]; netYes: number } | null> =>
  page.evaluate(() => (globalThis as any).__twinbookBot?.() ?? null)
const restingOf = async (u: string): Promise<{ side: string; outcome: string; price: number; remaining: number }[]> => (await getJson(stand, `/v1/orders/all/${u}`)).orders
const bothSides = (orders: ReadonlyArray<{ side: string; outcome: string }>): boolean =>
  // YES-terms bid = buy YES or sell NO; ask = buy NO or sell YES.
  orders.some((o) => (o.side === "buy") === (o.outcome === "yes")) && orders.some((o) => (o.side === "buy") !== (o.outcome === "yes"))

beforeAll(async () => {
  stand = await startStand()
  const markets = (await getJson(stand, "/v1/markets?status=active&limit=500")).markets as { neg_risk: boolean; outcomes: { market_id: string }[] }[]
  const binary = markets.filter((m) => !m.neg_risk)
  marketId = binary[0]!.outcomes[0]!.market_id
  marketId2 = binary[1]!.outcomes[0]!.market_id
  // Other participants: a market maker quoting 45¢ / 55¢ (the mid the bot quotes around) and a taker.
  maker = await nodeTrader(stand, "web-e2e-maker", 1_000_000_000)
  taker = await nodeTrader(stand, "web-e2e-taker", 1_000_000_000)
  // YES bid at 45¢, and a YES ask at 55¢ placed as its equivalent, a NO bid at 45¢.
  for (const market_id of [marketId, marketId2]) {
    for (const outcome of ["yes", "no"] as const) {
      const r = await maker.placeOrder({ market_id, side: "buy", outcome, price: 4500, size: 500, order_type: "gtc" })
      expect(r.status).toBe(200)
    }
  }
  const ctx = await stand.browser.newContext({ viewport: { width: 1280, height: 900 } })
  page = await ctx.newPage()
  page.on("pageerror", (e) => pageErrors.push(String(e)))
}, 240_000)

afterAll(async () => {
  await stand?.close()
}, 60_000)

describe("the web app in Chromium", () => {
  it("1. signs up, deposits test USDG from the faucet (credited live), places an order that shows in the book and cancels it", async () => {
    await page.goto(`${stand.web.url}/#/account`)
    await hasText(page.getByTestId("key-warning").first(), "Your key is your account")
    await page.getByTestId("create-key").click()
    await page.getByTestId("whoami").waitFor()
    user = (await text("whoami")).trim()
    expect(user).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/)
    await waitFor("registered", async () => ((await text("session-state")).includes("registered") ? true : undefined))
    await screenshots(page, "1-account")
    await page.goto(`${stand.web.url}/#/`)
    await page.getByTestId("market-card").first().waitFor()
    await page.getByTestId("market-search").fill("zzzz-no-such-market")
    await waitFor("search filters", async () => ((await page.getByTestId("market-card").count()) === 0 ? true : undefined), 10_000)
    await page.getByTestId("market-search").fill("")
    await page.getByTestId("market-card").first().waitFor()
    await screenshots(page, "1-markets")

    await page.goto(`${stand.web.url}/#/deposit`)
    await page.getByTestId("evm-wallet").waitFor()
    await page.getByTestId("link-wallet").click()
    await page.getByTestId("linked-wallet").waitFor()
    await page.getByTestId("deposit-address").waitFor()
    await page.getByTestId("deposit-amount").fill("100")
    await page.getByTestId("faucet").click()
    const stages = new Set<string>()
    await waitFor("deposit credited", async () => {
      const s = await page.getByTestId("deposit-stage").getAttribute("data-stage")
      if (s !== null) stages.add(s)
      return s === "credited" ? s : undefined
    }, 60_000, 50)
    expect((await getJson(stand, `/v1/balance/${user}`)).available).toBe(100_000_000)
    await waitFor("balance shown", async () => ((await text("deposit-balance")).includes("$100.00") ? true : undefined))
    await screenshots(page, "1-deposit-credited")

    await page.goto(`${stand.web.url}/#/m/${encodeURIComponent(marketId)}`)
    await page.getByTestId("ticket").waitFor()
    // A refusal is shown in words: selling YES shares the user does not hold.
    await page.getByTestId("ticket-sell").click()
    await page.getByTestId("ticket-price").fill("60")
    await page.getByTestId("ticket-size").fill("5")
    await page.getByTestId("ticket-submit").click()
    await hasText(page.getByTestId("ticket-error"), "don't hold enough shares")
    await hasText(page.getByTestId("ticket-error"), "insufficient_shares")
    // Buy 10 YES at 40¢: the preview, then the order in the book (a level of its own).
    await page.getByTestId("ticket-buy").click()
    await page.getByTestId("ticket-price").fill("40")
    await page.getByTestId("ticket-size").fill("10")
    await hasText(page.getByTestId("ticket-preview"), "$4.00")
    await page.getByTestId("ticket-submit").click()
    await page.locator('[data-testid="book-bid"][data-price="4000"][data-size="10"]').waitFor({ timeout: 15_000 })
    expect((await restingOf(user)).map((o) => [o.side, o.outcome, o.price, o.remaining])).toEqual([["buy", "yes", 4000, 10]])
    await page.getByTestId("open-order").first().waitFor()
    await screenshots(page, "1-order-in-book")
    await page.getByTestId("cancel-order").first().click()
    await page.locator('[data-testid="book-bid"][data-price="4000"]').waitFor({ state: "detached", timeout: 15_000 })
    expect(await restingOf(user)).toEqual([])

    // The WebSocket drops: the page says so, reconnects by itself and re-seeds.
    await page.evaluate(() => (globalThis as any).__twinbookDropFeed())
    await waitFor("feed back", async () => ((await page.getByTestId("ws-state").getAttribute("data-state")) === "open" ? true : undefined), 15_000, 50)
    expect(pageErrors).toEqual([])
  }, 180_000)

  it("2. the in-browser bot (Simple) quotes both sides within 20 s, pauses when fills leave it one-sided, and Stop & Withdraw leaves nothing resting or locked", async () => {
    await page.goto(`${stand.web.url}/#/earn`)
    await page.getByTestId("lp-market").selectOption(marketId)
    await page.getByTestId("lp-simple").click()
    await page.getByTestId("lp-capital").fill("60")
    await page.getByTestId("preset-balanced").check()
    const t0 = Date.now()
    await page.getByTestId("bot-start").click()
    await waitFor("two-sided quotes in the page", async () => {
      const sides = await page.getByTestId("bot-quote").evaluateAll((rows) => rows.map((r) => ({ side: r.getAttribute("data-side")!, outcome: r.getAttribute("data-outcome")! })))
      return bothSides(sides) ? true : undefined
    }, 20_000, 100)
    const quotedAfterMs = Date.now() - t0
    expect(quotedAfterMs).toBeLessThan(20_000)
    expect(bothSides(await restingOf(user))).toBe(true)
    await screenshots(page, "2-bot-quoting")

    // Another user's buys take the bot's asks, twice across a re-quote: inventory too one-sided → paused.
    const sweep = async () => {
      const asks = (await restingOf(user)).filter((o) => (o.side === "buy") !== (o.outcome === "yes"))
      const size = asks.reduce((n, o) => n + o.remaining, 0)
      expect(size).toBeGreaterThan(0)
      const r = await taker.placeOrder({ market_id: marketId, side: "buy", outcome: "yes", price: 5400, size, order_type: "ioc" })
      expect(r.status).toBe(200)
      return size
    }
    const first = await sweep()
    const requotes = (await botState())!.requotesAtMs.length
    await waitFor("a re-quote after the fills", async () => {
      const s = await botState()
      return s !== null && s.requotesAtMs.length > requotes && bothSides(await restingOf(user)) ? true : undefined
    }, 30_000)
    await sweep()
    const paused = await waitFor("paused", async () => {
      const s = await botState()
      return s?.state === "paused" ? s : undefined
    }, 30_000)
    expect(paused.netYes).toBeLessThanOrEqual(-first)
    await hasText(page.getByTestId("bot-reason"), "too one-sided")
    await screenshots(page, "2-bot-paused")

    await page.getByTestId("bot-stop").click()
    await waitFor("stopped", async () => ((await botState())?.state === "stopped" ? true : undefined), 30_000)
    expect(await restingOf(user)).toEqual([])
    expect((await getJson(stand, `/v1/balance/${user}`)).locked).toBe(0)
    await screenshots(page, "2-bot-stopped")
    // The portfolio shows the NO shares the fills left, nothing locked, and the trades.
    await page.goto(`${stand.web.url}/#/portfolio`)
    await page.getByTestId("positions").waitFor()
    await waitFor("nothing locked", async () => ((await page.getByTestId("balance-locked").getAttribute("data-micro")) === "0" ? true : undefined))
    await screenshots(page, "2-portfolio")
    await page.goto(`${stand.web.url}/#/earn`)
    await page.getByTestId("lp-form").waitFor()
    await page.locator(`[data-testid="lp-market"] option[value="${marketId}"]`).waitFor({ state: "attached" })
    await page.getByTestId("lp-market").selectOption(marketId)
  }, 180_000)

  it("3. an Advanced form with a bad field names the field", async () => {
    await page.getByTestId("lp-advanced").click()
    await page.getByTestId("adv-spread").fill("0.01") // 1 bps: below the 2 bps minimum
    await page.getByTestId("bot-start").click()
    await hasText(page.getByTestId("error-spread"), "Spread")
    await hasText(page.getByTestId("error-spread"), "0.02¢")
    await page.getByTestId("adv-spread").fill("2")
    await page.getByTestId("adv-levels").fill("many")
    await page.getByTestId("bot-start").click()
    await hasText(page.getByTestId("error-levels"), "Levels per side")
    expect(await page.getByTestId("error-spread").count()).toBe(0)
    expect((await botState())?.state).toBe("stopped") // nothing started
    await screenshots(page, "3-advanced-invalid")
    await page.getByTestId("adv-levels").fill("3")
    await page.getByTestId("lp-simple").click()
  }, 60_000)

  it("4. the server-managed bot: delegate a session key in the browser, start, status, stop", async () => {
    await page.getByTestId("server-delegate").click()
    await waitFor("delegated", async () => (!(await text("server-bot-session")).includes("none") ? true : undefined))
    await page.getByTestId("server-start").click()
    await waitFor("running", async () => ((await text("server-bot-status")) === "running" ? true : undefined))
    const status = await waitFor("server bot quoting", async () => {
      const s = await getJson(stand, `/v1/lp-bot/status?user=${user}`)
      return s.status === "running" && s.open_orders > 0 ? s : undefined
    })
    expect(status.markets[0].market_id).toBe(marketId)
    await screenshots(page, "4-server-bot-running")
    await page.getByTestId("server-stop").click()
    await waitFor("stopped", async () => ((await text("server-bot-status")) === "stopped" ? true : undefined))
    expect((await getJson(stand, `/v1/lp-bot/status?user=${user}`)).open_orders).toBe(0)
    expect(await restingOf(user)).toEqual([])
    // The operator closes the LP surface: the page's status poll gets lp_disabled and says so, then recovers.
    await admin(stand, "/v1/admin/lp", { state: "closed" })
    try {
      await page.getByTestId("banner-lp").waitFor({ timeout: 15_000 })
      await screenshots(page, "4-lp-disabled")
    } finally {
      await admin(stand, "/v1/admin/lp", { state: "open" })
    }
    await page.getByTestId("banner-lp").waitFor({ state: "detached", timeout: 15_000 })
  }, 90_000)

  it("5. withdraws to the linked wallet and watches it confirm on chain", async () => {
    await page.goto(`${stand.web.url}/#/deposit`)
    const wallet = ((await page.getByTestId("linked-wallet").textContent()) ?? "").trim() as `0x${string}`
    const before = await stand.chain.chain.balanceOf(stand.chain.info.token, wallet)
    await page.getByTestId("withdraw-amount").fill("5")
    await page.getByTestId("withdraw").click()
    await waitFor("confirmed", async () => ((await text("withdrawal-status")) === "confirmed" ? true : undefined), 60_000)
    expect(await stand.chain.chain.balanceOf(stand.chain.info.token, wallet)).toBe(before + 5_000_000n)
    const rows = (await getJson(stand, `/v1/withdrawals/all/${user}`)).withdrawals
    expect(rows[0]).toMatchObject({ status: "confirmed", amount_micro: 5_000_000, recipient: wallet })
    await screenshots(page, "5-withdraw-confirmed")
  }, 90_000)

  it("6. trading closed shows the banner and the bot waits, then resumes when it reopens", async () => {
    await page.goto(`${stand.web.url}/#/earn`)
    await page.getByTestId("lp-market").selectOption(marketId2)
    await page.getByTestId("lp-capital").fill("30")
    await page.getByTestId("bot-start").click()
    await waitFor("quoting", async () => ((await botState())?.state === "quoting" ? true : undefined), 20_000)
    await admin(stand, "/v1/admin/trading", { state: "closed" })
    try {
      await page.getByTestId("banner-trading").waitFor({ timeout: 30_000 })
      await waitFor("waiting", async () => ((await botState())?.state === "waiting" ? true : undefined), 30_000)
      await hasText(page.getByTestId("bot-reason"), "trading is closed")
      await screenshots(page, "6-trading-closed")
    } finally {
      await admin(stand, "/v1/admin/trading", { state: "open" })
    }
    await waitFor("quoting again", async () => ((await botState())?.state === "quoting" ? true : undefined), 30_000)
    await waitFor("banner gone", async () => ((await page.getByTestId("banner-trading").count()) === 0 ? true : undefined), 10_000)
    expect(bothSides(await restingOf(user))).toBe(true)
    await page.getByTestId("bot-stop").click()
    await waitFor("stopped", async () => ((await botState())?.state === "stopped" ? true : undefined), 30_000)
    expect(await restingOf(user)).toEqual([])
    expect(pageErrors).toEqual([])
  }, 150_000)
})
