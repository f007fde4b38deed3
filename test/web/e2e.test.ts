// suite: mostly waits (the page, the bot's cadence, blocks): kept from starting beside another such file
// The web app in a real Chromium against the real service and a real Anvil (test/web/harness.ts).
// One person's journeys, in order, in one browser page: sign up → faucet deposit credited →
// an order placed and cancelled in the book; the in-browser bot (Simple) quoting both sides,
// pausing when another user's fills leave it one-sided, Stop & Withdraw; an Advanced form with a
// bad field; the server-managed bot; a withdrawal confirmed on chain; trading closed → banner →
// the bot resumes. Then, each a new person in a browser context of their own: sign out and back
// in with the downloaded backup; closing the tab while the bot quotes (its cancels, and the
// next visit's offer when they fail); an injected EIP-1193 wallet forwarding to Anvil.
// Each journey saves desktop and phone screenshots under out/web/, and axe-core checks every page
// it visits (markets, market, portfolio, account, deposit, Earn running and stopped) at 0 serious
// or critical violations.
import { readFileSync } from "node:fs"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { ApiClient } from "../../src/client/api-client.ts"
import { describeViolations, seriousViolations } from "./axe.ts"
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
/** What the page logged as errors (a failed request shows here as "Failed to load resource: … 404"). */
const consoleErrors: string[] = []

/** Waits until the element's text contains `part`; fails with the text it had. */
const hasText = async (locator: ReturnType<Page["getByTestId"]>, part: string): Promise<void> => {
  let last = ""
  try {
    await waitFor(`text "${part}"`, async () => ((last = (await locator.first().textContent({ timeout: 5_000 })) ?? "").includes(part) ? true : undefined), 10_000, 100)
  } catch {
    expect(last).toContain(part)
  }
}
/** A new person in page `p`: creates a key, registers, returns the user. */
const signUp = async (p: Page): Promise<string> => {
  await p.goto(`${stand.web.url}/#/account`)
  await p.getByTestId("create-key").click()
  await p.getByTestId("whoami").waitFor()
  const u = ((await p.getByTestId("whoami").textContent()) ?? "").trim()
  await waitFor("registered", async () => (((await p.getByTestId("session-state").textContent()) ?? "").includes("registered — signed in") ? true : undefined))
  return u
}
const text = async (testid: string): Promise<string> => (await page.getByTestId(testid).first().textContent()) ?? ""
/** axe-core on the page as it is now: 0 serious or critical violations, else the failure lists them. */
const expectAccessible = async (p: Page, name: string): Promise<void> => {
  const violations = await seriousViolations(p)
  expect(violations.length, `axe-core, ${name} page:\n${describeViolations(violations)}`).toBe(0)
}
/** Waits (up to `timeoutMs`) until `check` holds; fails with what it last saw. */
const eventually = async (what: string, check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> => {
  await waitFor(what, async () => ((await check()) ? true : undefined), timeoutMs, 50)
}
/** The question the service gives a market (an outcome of a multi-outcome event reads "<question> — <label>"). */
const questionOf = async (id: string): Promise<string> => {
  const ev = (await getJson(stand, `/v1/markets/${encodeURIComponent(id)}`)) as { outcomes: { market_id: string; question: string }[] }
  return ev.outcomes.find((o) => o.market_id === id)!.question
}
const botState = (): Promise<{ state: string; quotes: { side: string; outcome: string }[]; requotesAtMs: number[]; netYes: number } | null> =>
  page.evaluate(() => (globalThis as any).__twinbookBot?.() ?? null)
const restingOf = async (u: string): Promise<{ id: number; side: string; outcome: string; price: number; remaining: number }[]> => (await getJson(stand, `/v1/orders/all/${u}`)).orders
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
  page.on("console", (m) => {
    if (m.type() === "error") consoleErrors.push(m.text())
  })
}, 240_000)

afterAll(async () => {
  await stand?.close()
}, 60_000)

describe("the web app in Chromium", () => {
  it("1. signs up, deposits test USDG from the faucet (credited live), places an order that shows in the book and cancels it", async () => {
    await page.goto(`${stand.web.url}/#/account`)
    await hasText(page.getByTestId("key-warning").first(), "Your key is your account")
    await expectAccessible(page, "account (signed out)")
    await page.getByTestId("create-key").click()
    await page.getByTestId("whoami").waitFor()
    user = (await text("whoami")).trim()
    expect(user).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/)
    await waitFor("registered", async () => ((await text("session-state")).includes("registered") ? true : undefined))
    await expectAccessible(page, "account")
    await screenshots(page, "1-account")
    await page.goto(`${stand.web.url}/#/`)
    await page.getByTestId("market-card").first().waitFor()
    // The search box has a real label (not just its placeholder).
    const search = page.getByLabel("Search markets", { exact: true })
    expect(await search.getAttribute("data-testid")).toBe("market-search")
    await search.fill("zzzz-no-such-market")
    await waitFor("search filters", async () => ((await page.getByTestId("market-card").count()) === 0 ? true : undefined), 10_000)
    await search.fill("")
    await page.getByTestId("market-card").first().waitFor()
    // A card whose book has no quotes says so in words (not "—"); the quoted one shows its mid.
    const quoted = page.getByTestId("market-card").filter({ hasText: await questionOf(marketId) }).first()
    await hasText(quoted, "50¢")
    const emptyId = ((await getJson(stand, "/v1/markets?status=active&limit=500")).markets as { neg_risk: boolean; outcomes: { market_id: string }[] }[])
      .filter((m) => !m.neg_risk).map((m) => m.outcomes[0]!.market_id).find((id) => id !== marketId && id !== marketId2)!
    expect((await getJson(stand, `/v1/markets/${encodeURIComponent(emptyId)}/book`)).bids).toEqual([])
    const empty = page.getByTestId("market-card").filter({ hasText: await questionOf(emptyId) }).first()
    await hasText(empty, "no quotes")
    expect(await empty.textContent()).not.toContain("—")
    await expectAccessible(page, "markets")
    await screenshots(page, "1-markets")

    await page.goto(`${stand.web.url}/#/deposit`)
    await page.getByTestId("evm-wallet").waitFor()
    // One currency wording: amounts in dollars; USDG (the chain's token) explained once; no "USDC".
    await hasText(page.getByTestId("currency-note"), "1 USDG credits $1.00")
    expect(await page.getByLabel("Amount ($)").count()).toBe(2) // deposit and withdraw
    expect(await page.locator("main").textContent()).not.toContain("USDC")
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
    // The stages say in text (and a mark) which are done, not by colour alone.
    const stageText = await text("deposit-stage")
    for (const [i, stage] of ["detected", "confirming", "credited"].entries()) expect(stageText).toContain(`✓ ${i + 1}. ${stage} (done)`)
    await expectAccessible(page, "deposit")
    // Before the link, the page asked for the linked wallet without a 404 (which the browser logs as an error).
    expect(consoleErrors).toEqual([])
    await screenshots(page, "1-deposit-credited")

    await page.goto(`${stand.web.url}/#/m/${encodeURIComponent(marketId)}`)
    await page.getByTestId("ticket").waitFor()
    // The chart's heading is its name only; the interval buttons are a group beside it, pressed state exposed.
    expect(await page.getByRole("heading", { name: "Price (YES)", exact: true }).count()).toBe(1)
    expect(await page.getByTestId("candles-1m").getAttribute("aria-pressed")).toBe("true")
    // The ticket starts at the best price: buy YES at the best ask (the maker's NO bid at 45¢ is a YES ask at 55¢), sell at the best bid.
    await eventually("the ticket at the best ask", async () => (await page.getByTestId("ticket-price").inputValue()) === "55")
    expect(await page.getByTestId("ticket-buy").getAttribute("aria-pressed")).toBe("true")
    expect(await page.getByTestId("ticket-sell").getAttribute("aria-pressed")).toBe("false")
    await page.getByTestId("ticket-sell").click()
    expect(await page.getByTestId("ticket-sell").getAttribute("aria-pressed")).toBe("true")
    expect(await page.getByTestId("ticket-yes").getAttribute("aria-pressed")).toBe("true")
    expect(await page.getByTestId("ticket-price").inputValue()).toBe("45")
    // Selling YES shares the user does not hold: the preview says so and Sell is not offered.
    await hasText(page.getByTestId("ticket-preview"), "You hold no YES shares")
    expect(await page.getByTestId("ticket-submit").isDisabled()).toBe(true)
    // A refusal is shown in words: a post-only buy that would cross the 55¢ ask.
    await page.getByTestId("ticket-buy").click()
    await page.getByTestId("ticket-type").selectOption("post_only")
    await page.getByTestId("ticket-price").fill("60")
    await page.getByTestId("ticket-size").fill("5")
    await page.getByTestId("ticket-submit").click()
    await hasText(page.getByTestId("ticket-error"), "would cross")
    await hasText(page.getByTestId("ticket-error"), "would_cross")
    await page.getByTestId("ticket-type").selectOption("gtc")
    // Money to the cent, a cost rounded up: 1 contract at 40.05¢ costs at most $0.41, never "$0.4005".
    await page.getByTestId("ticket-price").fill("40.05")
    await page.getByTestId("ticket-size").fill("1")
    await hasText(page.getByTestId("ticket-preview"), "Cost (at most)$0.41")
    expect(await page.getByTestId("ticket-preview").textContent()).not.toMatch(/\$\d+\.\d{3}/)
    // Buy 10 YES at 40¢: the preview, then the order in the book (a level of its own).
    await page.getByTestId("ticket-price").fill("40")
    await page.getByTestId("ticket-size").fill("10")
    await hasText(page.getByTestId("ticket-preview"), "$4.00")
    await page.getByTestId("ticket-submit").click()
    // The order's toast does not follow to the next page: the portfolio's Open orders are not covered.
    await page.getByTestId("toast").filter({ hasText: "resting" }).waitFor()
    await page.getByTestId("nav-portfolio").click()
    // The portfolio page itself (the market page has Open orders too).
    await page.getByTestId("balance-available").waitFor()
    await page.getByTestId("open-order").first().waitFor({ timeout: 15_000 })
    expect((await page.getByTestId("toast").allTextContents()).join(" | ")).toBe("")
    // Open orders name the market by its question (4th column).
    await hasText(page.getByTestId("open-orders").locator("tbody td:nth-child(4) a"), await questionOf(marketId))
    await page.goto(`${stand.web.url}/#/m/${encodeURIComponent(marketId)}`)
    await page.locator('[data-testid="book-bid"][data-price="4000"][data-size="10"]').waitFor({ timeout: 15_000 })
    expect((await restingOf(user)).map((o) => [o.side, o.outcome, o.price, o.remaining])).toEqual([["buy", "yes", 4000, 10]])
    await page.getByTestId("open-order").first().waitFor()
    await expectAccessible(page, "market")
    await screenshots(page, "1-order-in-book")
    // On a phone the ticket is near the top, on the first screen.
    await page.setViewportSize({ width: 390, height: 844 })
    await page.evaluate(() => (globalThis as any).scrollTo(0, 0))
    const ticketBox = (await page.getByTestId("ticket").boundingBox())!
    expect(ticketBox.y).toBeLessThan(844 / 2)
    await page.setViewportSize({ width: 1280, height: 900 })
    await page.getByTestId("cancel-order").first().click()
    await page.locator('[data-testid="book-bid"][data-price="4000"]').waitFor({ state: "detached", timeout: 15_000 })
    expect(await restingOf(user)).toEqual([])

    // The market's first trade (two Node traders): the chart draws it live, as Recent trades do, without a reload;
    // its axis is padded around the one price (distinct labels, not six "55¢").
    expect((await getJson(stand, `/v1/markets/${encodeURIComponent(marketId)}/trades`)).trades).toEqual([])
    const noCandles = page.getByText("No trades in this 1m window yet")
    await noCandles.waitFor()
    expect((await taker.placeOrder({ market_id: marketId, side: "buy", outcome: "yes", price: 5500, size: 1, order_type: "ioc" })).status).toBe(200)
    await page.getByTestId("trades").waitFor({ timeout: 15_000 })
    await eventually("the chart's first candle, live", async () => (await noCandles.count()) === 0 && (await page.getByTestId("candles").isVisible()))
    expect(await page.getByTestId("candles").getAttribute("data-bars")).toBe("1")
    const chart = await waitFor("the chart's price axis", async () => {
      const c = (await page.evaluate(() => (globalThis as any).__twinbookChart?.())) as
        | { bars: number; range: { from: number; to: number } | null; logical: { from: number; to: number } | null }
        | undefined
      return c?.range != null && c.logical != null ? { bars: c.bars, range: c.range, logical: c.logical } : undefined
    }, 10_000, 50)
    expect(chart.bars).toBe(1)
    expect(chart.range.to - chart.range.from).toBeGreaterThanOrEqual(0.03)
    expect(chart.range.from).toBeLessThan(0.55)
    expect(chart.range.to).toBeGreaterThan(0.55)
    // Room right of the newest bar (index bars − 1), so its centred time label is not cut at the edge.
    expect(chart.logical.to - (chart.bars - 1)).toBeGreaterThanOrEqual(2)
    await screenshots(page, "1-market-first-trade")

    // The WebSocket drops (FeedClient.dropConnection, as a network loss would): the page says so
    // (the dot leaves "open"), then reconnects by itself and re-seeds. The states are recorded in
    // the page, so a reconnect faster than a poll is still seen.
    expect(await page.getByTestId("ws-state").getAttribute("data-state")).toBe("open")
    await page.evaluate(() => {
      const g = globalThis as any // the page's window (this file compiles without the DOM types)
      const dot = g.document.querySelector('[data-testid="ws-state"]')
      const seen: string[] = (g.__wsStates = [])
      new g.MutationObserver(() => seen.push(dot.getAttribute("data-state") ?? "")).observe(dot, { attributes: true, attributeFilter: ["data-state"] })
      g.__twinbookDropFeed()
    })
    const wsStates = await waitFor("feed down then back", async () => {
      const seen = (await page.evaluate(() => (globalThis as any).__wsStates)) as string[]
      return seen.includes("down") && seen[seen.length - 1] === "open" ? seen : undefined
    }, 15_000, 50)
    expect(wsStates.indexOf("down")).toBeLessThan(wsStates.lastIndexOf("open"))
    expect(pageErrors).toEqual([])
  }, 180_000)

  it("2. the in-browser bot (Simple) quotes both sides within 20 s, pauses when fills leave it one-sided, and Stop & Withdraw leaves nothing resting or locked", async () => {
    await page.goto(`${stand.web.url}/#/earn`)
    await page.getByTestId("lp-market").selectOption(marketId)
    await page.getByTestId("lp-simple").click()
    expect(await page.getByTestId("lp-simple").getAttribute("aria-pressed")).toBe("true")
    expect(await page.getByTestId("lp-advanced").getAttribute("aria-pressed")).toBe("false")
    // Nothing delegated yet: there is nothing for "Stop & revoke keys" to do.
    await page.getByTestId("server-bot-session").waitFor()
    await hasText(page.getByTestId("server-bot-session"), "none delegated")
    expect(await page.getByTestId("server-revoke").isDisabled()).toBe(true)
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
    await expectAccessible(page, "Earn (bot running)")
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
    await hasText(page.getByTestId("bot-state"), "stopped")
    // The form unlocks as soon as the bot has stopped (it stayed "Bot running" for 20 s and more).
    await eventually("Start offered again", async () => (await page.getByTestId("bot-start").isEnabled()) && (await text("bot-start")) === "Start in this browser", 5_000)
    expect(await page.getByTestId("lp-market").isEnabled()).toBe(true)
    expect((await botState())?.state).toBe("stopped")
    expect(await restingOf(user)).toEqual([])
    expect((await getJson(stand, `/v1/balance/${user}`)).locked).toBe(0)
    await expectAccessible(page, "Earn (bot stopped)")
    await screenshots(page, "2-bot-stopped")
    // The portfolio shows the NO shares the fills left, nothing locked, and the trades, each market by its question.
    await page.goto(`${stand.web.url}/#/portfolio`)
    await page.getByTestId("positions").waitFor()
    await waitFor("nothing locked", async () => ((await page.getByTestId("balance-locked").getAttribute("data-micro")) === "0" ? true : undefined))
    const question = await questionOf(marketId)
    // The position arrived live (user: channel frames carry the slug, not the question).
    await eventually("the position named by its question", async () => ((await page.getByTestId("positions").locator("tbody td:first-child a").allTextContents()).includes(question)))
    const history = page.locator(".card", { has: page.getByRole("heading", { name: "Trade history" }) }).locator("tbody td:nth-child(2) a")
    // The trade history loads on its own request, after the positions (run 49 of issue 35 read it empty): waited for, never empty.
    await eventually("trade history named by question", async () => {
      const names = await history.allTextContents()
      return names.length > 0 && names.every((n) => n === question)
    })
    await expectAccessible(page, "portfolio")
    await screenshots(page, "2-portfolio")
    // Holding NO shares now, the ticket offers to sell them and says how many.
    await page.goto(`${stand.web.url}/#/m/${encodeURIComponent(marketId)}`)
    await page.getByTestId("ticket-sell").click()
    await page.getByTestId("ticket-no").click()
    await page.getByTestId("ticket-size").fill("1")
    await hasText(page.getByTestId("ticket-preview"), "NO shares free to sell")
    expect(await page.getByTestId("ticket-submit").isEnabled()).toBe(true)
    await page.goto(`${stand.web.url}/#/earn`)
    await page.getByTestId("lp-form").waitFor()
    await page.locator(`[data-testid="lp-market"] option[value="${marketId}"]`).waitFor({ state: "attached" })
    await page.getByTestId("lp-market").selectOption(marketId)
  }, 180_000)

  it("3. an Advanced form with a bad field names the field, with its range, as you type, and clears it once fixed", async () => {
    await page.getByTestId("lp-advanced").click()
    expect(await page.getByTestId("lp-advanced").getAttribute("aria-pressed")).toBe("true")
    // One currency wording on Earn too: dollars, no "USDC".
    expect(await page.locator("main").textContent()).not.toContain("USDC")
    await page.getByTestId("adv-spread").fill("0.01") // 1 bps: below the 2 bps minimum
    await page.getByTestId("adv-spread").blur()
    // Shown without pressing Start, linked to its field (aria-describedby), with the allowed range.
    await hasText(page.getByTestId("error-spread"), "Spread: must be between 0.02¢ and 99.98¢")
    const describedBy = await page.getByTestId("adv-spread").getAttribute("aria-describedby")
    expect(describedBy).not.toBeNull()
    expect(await page.locator(`[id="${describedBy}"]`).getAttribute("data-testid")).toBe("error-spread")
    expect(await page.getByTestId("adv-spread").getAttribute("aria-invalid")).toBe("true")
    // Text that is not a spread in cents still gets the range.
    await page.getByTestId("adv-spread").fill("150")
    await hasText(page.getByTestId("error-spread"), "must be between 0.02¢ and 99.98¢")
    await expectAccessible(page, "Earn (Advanced, a field in error)")
    // Fixed: the error goes at once, no Start needed.
    await page.getByTestId("adv-spread").fill("2")
    await page.getByTestId("error-spread").waitFor({ state: "detached", timeout: 5_000 })
    expect(await page.getByTestId("adv-spread").getAttribute("aria-describedby")).toBeNull()
    await page.getByTestId("adv-levels").fill("many")
    await page.getByTestId("bot-start").click()
    await hasText(page.getByTestId("error-levels"), "Levels per side: must be a whole number from 1 to 10")
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

  // Journeys 7–9 each run a new person in a browser context of their own (own storage and cookies).

  it("7. signs out: the page is signed out, the key is gone from storage, user-only actions are unavailable; the downloaded backup signs the same user back in", async () => {
    const ctx = await stand.browser.newContext({ viewport: { width: 1280, height: 900 } })
    try {
      const p = await ctx.newPage()
      const errors: string[] = []
      p.on("pageerror", (e) => errors.push(String(e)))
      const u = await signUp(p)
      await admin(stand, "/v1/admin/credit", { user: u, amount_micro: 7_000_000 })
      await hasText(p.getByTestId("header-balance"), "$7.00")
      // The Simple capital starts at no more than the balance ($100 would be refused with $7 available).
      await p.goto(`${stand.web.url}/#/earn`)
      await p.getByTestId("lp-capital").waitFor()
      expect(await p.getByTestId("lp-capital").inputValue()).toBe("7")
      await p.goto(`${stand.web.url}/#/account`)
      await p.getByTestId("show-secret").click()
      const shown = ((await p.getByTestId("secret").textContent()) ?? "").trim()
      const [download] = await Promise.all([p.waitForEvent("download"), p.getByTestId("download-backup").click()])
      const backupFile = readFileSync(await download.path(), "utf8")
      expect(backupFile).toContain(`user: ${u}`)
      const secret = /secret: ([0-9a-f]{64})/.exec(backupFile)?.[1]
      expect(secret).toBe(shown)

      // Declining the confirmation keeps the key.
      p.once("dialog", (d) => void d.dismiss())
      await p.getByTestId("sign-out").click()
      expect(((await p.getByTestId("whoami").textContent()) ?? "").trim()).toBe(u)
      p.once("dialog", (d) => void d.accept())
      await p.getByTestId("sign-out").click()
      await p.getByTestId("create-key").waitFor()
      const signedOut = async () => {
        expect(await p.getByTestId("whoami").count()).toBe(0)
        expect(await p.getByTestId("header-balance").count()).toBe(0)
        const storage = (await p.evaluate(() => {
          const ls = (globalThis as any).localStorage
          return Object.fromEntries(Object.keys(ls).map((k) => [k, ls.getItem(k)]))
        })) as Record<string, string>
        expect(storage["twinbook.key.v1"]).toBeUndefined()
        expect(JSON.stringify(storage)).not.toContain(secret!)
      }
      await signedOut()
      // Still signed out after a reload: the key is gone, not just hidden.
      await p.reload()
      await p.getByTestId("create-key").waitFor()
      await signedOut()
      // What needs the key is not offered: trading, the bot, deposits and withdrawals, the portfolio.
      const userOnly = ["ticket", "ticket-submit", "bot-start", "server-bot", "link-wallet", "faucet", "withdraw", "deposit-address", "positions", "open-order"]
      for (const route of [`/m/${encodeURIComponent(marketId)}`, "/earn", "/deposit", "/portfolio"]) {
        await p.goto(`${stand.web.url}/#${route}`)
        await p.getByRole("link", { name: "Sign in" }).last().waitFor()
        for (const id of userOnly) expect(await p.getByTestId(id).count(), `${id} on #${route}`).toBe(0)
        if (route === "/deposit") await screenshots(p, "7-signed-out")
      }

      await p.goto(`${stand.web.url}/#/account`)
      await p.getByTestId("import-text").fill(backupFile.split("\n").find((l) => l.startsWith("secret: "))!.slice("secret: ".length))
      await p.getByTestId("import-key").click()
      await p.getByTestId("whoami").waitFor()
      expect(((await p.getByTestId("whoami").textContent()) ?? "").trim()).toBe(u)
      await waitFor("registered", async () => (((await p.getByTestId("session-state").textContent()) ?? "").includes("registered — signed in") ? true : undefined))
      await hasText(p.getByTestId("header-balance"), "$7.00")
      await screenshots(p, "7-signed-back-in")
      expect(errors).toEqual([])
    } finally {
      await ctx.close()
    }
  }, 120_000)

  it("8. closing the tab while the in-browser bot quotes sends its cancels; quotes whose cancels failed are offered for cancelling on the next visit", async () => {
    const ctx = await stand.browser.newContext({ viewport: { width: 1280, height: 900 } })
    try {
      const errors: string[] = []
      const open = async (route: string): Promise<Page> => {
        const p = await ctx.newPage()
        p.on("pageerror", (e) => errors.push(String(e)))
        await p.goto(`${stand.web.url}/#${route}`)
        return p
      }
      const startBot = async (p: Page, u: string) => {
        await p.goto(`${stand.web.url}/#/earn`)
        await p.locator(`[data-testid="lp-market"] option[value="${marketId}"]`).waitFor({ state: "attached" })
        await p.getByTestId("lp-market").selectOption(marketId)
        await p.getByTestId("lp-capital").fill("40")
        await p.getByTestId("bot-start").click()
        return waitFor("two-sided quotes resting", async () => {
          const orders = await restingOf(u)
          const shown = await p.getByTestId("bot-quote").count()
          return bothSides(orders) && shown === orders.length ? orders : undefined
        }, 30_000)
      }
      let p = await open("/account")
      const u = await signUp(p)
      await admin(stand, "/v1/admin/credit", { user: u, amount_micro: 100_000_000 })
      await hasText(p.getByTestId("header-balance"), "$100.00")

      // (a) The tab closes as a person closes it (unload handlers run): pagehide sends keepalive cancels.
      await startBot(p, u)
      await p.close({ runBeforeUnload: true })
      await waitFor("the closed tab's quotes cancelled", async () => ((await restingOf(u)).length === 0 ? true : undefined), 15_000)
      expect((await getJson(stand, `/v1/balance/${u}`)).locked).toBe(0)

      // The next visit finds none of the remembered quotes resting: no offer, and the record is dropped.
      p = await open("/earn")
      await p.getByTestId("lp-form").waitFor()
      await waitFor("the record dropped", async () => ((await p.evaluate(() => (globalThis as any).localStorage.getItem("twinbook.browserbot.v1"))) === null ? true : undefined), 10_000)
      expect(await p.getByTestId("bot-leftover").count()).toBe(0)

      // (b) The closing tab's cancels do not take effect (as when the browser is killed before they go
      // out; here the session cookie they need is gone): the quotes stay resting…
      const quotes = await startBot(p, u)
      // The bot remembers its quote ids: wait until every resting one is in the record (an event, not a time).
      await waitFor("the quote ids remembered", async () => {
        const text = (await p.evaluate(() => (globalThis as any).localStorage.getItem("twinbook.browserbot.v1"))) as string | null
        const ids: number[] = text === null ? [] : (JSON.parse(text) as { orderIds: number[] }).orderIds
        return quotes.every((o) => ids.includes(o.id)) ? true : undefined
      }, 30_000)
      await ctx.clearCookies()
      await p.close({ runBeforeUnload: true })
      await new Promise((r) => setTimeout(r, 2000))
      const resting = await restingOf(u)
      expect(bothSides(resting)).toBe(true)
      // …and the next visit (which registers again: a new session cookie) offers to cancel them.
      p = await open("/earn")
      await hasText(p.getByTestId("bot-leftover"), `${resting.length} of its quotes still rest`)
      await screenshots(p, "8-bot-leftover")
      await p.getByTestId("bot-leftover-cancel").click()
      await waitFor("left-over quotes cancelled", async () => ((await restingOf(u)).length === 0 ? true : undefined), 15_000)
      await p.getByTestId("bot-leftover").waitFor({ state: "detached", timeout: 10_000 })
      expect((await getJson(stand, `/v1/balance/${u}`)).locked).toBe(0)
      expect(errors).toEqual([])
    } finally {
      await ctx.close()
    }
  }, 180_000)

  it("9. an injected EIP-1193 wallet (forwarding to Anvil's unlocked account): connect, link, deposit credited", async () => {
    const ctx = await stand.browser.newContext({ viewport: { width: 1280, height: 900 } })
    try {
      const account = stand.chain.account(4)
      const calls: string[] = []
      // The wallet: eth_requestAccounts / eth_accounts answer its one account; it refuses to sign for another;
      // everything else goes to Anvil, whose development accounts are unlocked (personal_sign, eth_sendTransaction).
      await ctx.exposeFunction("__walletRpc", async (method: string, params: unknown[]) => {
        calls.push(method)
        if (method === "eth_requestAccounts" || method === "eth_accounts") return { result: [account] }
        const from = method === "personal_sign" ? params[1] : method === "eth_sendTransaction" ? (params[0] as { from?: string }).from : account
        if (typeof from !== "string" || from.toLowerCase() !== account) return { error: { code: 4100, message: `not this wallet's account: ${String(from)}` } }
        const res = await fetch(stand.chain.anvil.rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: calls.length, method, params }) })
        return (await res.json()) as unknown
      })
      await ctx.addInitScript(() => {
        const rpc = (globalThis as any).__walletRpc as (m: string, p: unknown[]) => Promise<{ result?: unknown; error?: { code: number; message: string } }>
        ;(globalThis as any).ethereum = {
          request: async ({ method, params }: { method: string; params?: unknown[] }) => {
            const r = await rpc(method, params ?? [])
            if (r.error !== undefined) throw Object.assign(new Error(r.error.message), { code: r.error.code })
            return r.result
          },
          on: () => {},
          removeListener: () => {}
        }
      })
      const p = await ctx.newPage()
      const errors: string[] = []
      p.on("pageerror", (e) => errors.push(String(e)))
      const u = await signUp(p)
      await p.goto(`${stand.web.url}/#/deposit`)
      await p.getByTestId("connect-injected").click()
      expect(((await p.getByTestId("evm-wallet").textContent()) ?? "").toLowerCase()).toBe(account)
      await p.getByTestId("link-wallet").click()
      await p.getByTestId("linked-wallet").waitFor()
      expect(((await p.getByTestId("linked-wallet").textContent()) ?? "").trim()).toBe(account)
      expect((await getJson(stand, `/v1/wallet/${u}`)).wallet).toBe(account)
      expect(calls).toContain("personal_sign")

      // The wallet holds test USDG (minted by the operator) and sends 20 to the deposit address itself.
      await stand.chain.mint(account, 50_000_000n)
      await p.getByTestId("deposit-address").waitFor()
      const depositAddress = ((await p.getByTestId("deposit-address").textContent()) ?? "").trim() as `0x${string}`
      await p.getByTestId("deposit-amount").fill("20")
      await p.getByTestId("send-from-wallet").click()
      await waitFor("deposit credited", async () => ((await p.getByTestId("deposit-stage").getAttribute("data-stage")) === "credited" ? true : undefined), 60_000, 100)
      expect(calls).toContain("eth_sendTransaction")
      expect((await getJson(stand, `/v1/balance/${u}`)).available).toBe(20_000_000)
      expect(await stand.chain.chain.balanceOf(stand.chain.info.token, account)).toBe(30_000_000n)
      expect(depositAddress).toMatch(/^0x[0-9a-fA-F]{40}$/)
      await waitFor("balance shown", async () => (((await p.getByTestId("deposit-balance").textContent()) ?? "").includes("$20.00") ? true : undefined))
      await screenshots(p, "9-injected-wallet-deposit")
      expect(errors).toEqual([])
    } finally {
      await ctx.close()
    }
  }, 120_000)
})
