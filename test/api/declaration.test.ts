// The API is declared once (src/api/declaration) and everything else derives from it (issue
// 35 item 1; docs/contributing.md "Adding a route"): the fast router serves exactly the declared
// routes, for the service and for the deposit service; no source names a route's path but the
// route table; every client method calls a declared route with its declared method; no wire
// type is written a second time; and the response check every black-box test runs through
// (test/support/conformance.ts) really refuses a response that drifts.
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import ts from "typescript"
import { Schema, SchemaAST } from "effect"
import { describe, expect, expectTypeOf, it } from "vitest"
import { makeRouter } from "../../src/api/app.ts"
import { API, DEPOSIT, declaredApi, declaredDepositApi } from "../../src/api/declaration/api.ts"
import { API_TABLE, DEPOSIT_TABLE } from "../../src/api/declaration/table.ts"
import { ApiClient } from "../../src/client/api-client.ts"
import { delegationMessage } from "../../src/auth/messages.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import { PublicClient } from "../../src/client/public-client.ts"
import type * as Client from "../../src/client/types.ts"
import * as Declared from "../../src/domain/schemas.ts"
import * as W from "../../src/domain/wire.ts"
import * as Dev from "../../src/api/declaration/dev.ts"
import { sourceFiles } from "../determinism/source-files.ts"
import { makeDepositApp } from "../../src/deposit/app.ts"
import { SimChain } from "../../src/chain/sim.ts"
import { Exchange, memoryJournal } from "../../src/service/exchange.ts"
import { RateLimiter } from "../../src/usecase/rate-limit.ts"
import { conformingFetch, declaredRoutes, NonConformingResponse, nonConformance } from "../support/conformance.ts"

const key = (r: { method: string; path: string }) => `${r.method} ${r.path}`

describe("the router serves exactly the declared routes", () => {
  it("API: same methods and paths, both ways", () => {
    const served = makeRouter().list().map(key).sort()
    const declared = declaredRoutes(declaredApi()).map(key).sort()
    expect(served).toEqual(declared)
    // The declaration read back from the HttpApi is the table it was built from.
    expect(declared).toEqual(Object.values(API).flatMap((g) => Object.values(g)).map(key).sort())
  })

  it("deposit service: the same, answered by the running app", async () => {
    const app = makeDepositApp({
      exchange: new Exchange(() => 0, memoryJournal()),
      chain: new SimChain({ seed: 1 }),
      limiter: new RateLimiter(() => 0),
      config: { minUsdgMicro: 1, maxPerTxMicro: 2, corsOrigins: new Set() }
    })
    const declared = declaredRoutes(declaredDepositApi())
    expect(declared.map(key).sort()).toEqual(Object.values(DEPOSIT).flatMap((g) => Object.values(g)).map(key).sort())
    // Every declared route is served: a request to it is never the router's "no route" 404 nor a 405.
    for (const r of declared) {
      const path = r.path.replace(/:\w+/g, "0x0000000000000000000000000000000000000001")
      const res = await app({ method: r.method, path, query: new URLSearchParams(), headers: {}, body: "", ip: "127.0.0.1" })
      expect(res.body, key(r)).not.toMatch(/no route|is not allowed/)
    }
    // And nothing beyond: an undeclared path under the service's prefix is not served.
    const res = await app({ method: "GET", path: "/v1/deposit/other/0x1", query: new URLSearchParams(), headers: {}, body: "", ip: "127.0.0.1" })
    expect(res.status).toBe(404)
  })
})

describe("the conformance check", () => {
  const routes = declaredRoutes(declaredApi())
  const json = "application/json; charset=utf-8"
  const balance = JSON.stringify({ user: "u", available: 1, locked: 0, total: 1 })

  it("passes a body of the declared shape", () => {
    expect(nonConformance(routes, "GET", "/v1/balance/abc", 200, json, balance)).toBeNull()
    expect(nonConformance(routes, "GET", "/v1/balance/abc", 400, json, JSON.stringify({ error: "invalid_pubkey", detail: "x" }))).toBeNull()
  })

  it("catches a planted mismatch: a field renamed, retyped, added, or an undeclared status or code", () => {
    const planted: Array<[number, string]> = [
      [200, JSON.stringify({ user: "u", available_micro: 1, locked: 0, total: 1 })],
      [200, JSON.stringify({ user: "u", available: "1", locked: 0, total: 1 })],
      [200, JSON.stringify({ user: "u", available: 1, locked: 0, total: 1, extra: true })],
      [201, balance],
      [400, JSON.stringify({ error: "invalid_order", detail: "x" })],
      [500, "<html>oops</html>"]
    ]
    for (const [status, body] of planted) expect(nonConformance(routes, "GET", "/v1/balance/abc", status, json, body), body).not.toBeNull()
    // An error of another status than the catalogue's, on an undeclared path.
    expect(nonConformance(routes, "GET", "/v1/nowhere", 400, json, JSON.stringify({ error: "not_found" }))).not.toBeNull()
    expect(nonConformance(routes, "GET", "/v1/nowhere", 404, json, JSON.stringify({ error: "not_found" }))).toBeNull()
  })

  it("fails the request (and so the test) through the checking fetch", async () => {
    const base = "http://declared.test"
    const fake = (async () => new Response(JSON.stringify({ user: "u", available: 1, locked: 0 }), { status: 200, headers: { "content-type": json } })) as unknown as typeof fetch
    const checked = conformingFetch(declaredApi(), base, fake)
    await expect(checked(`${base}/v1/balance/abc`)).rejects.toThrow(NonConformingResponse)
    // Another origin is not checked.
    expect((await checked("http://elsewhere.test/v1/balance/abc")).status).toBe(200)
  })
})

const root = join(import.meta.dirname, "..", "..")
const stripComments = (src: string): string => src.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:])\/\/.*$/gm, "$1")

/** A string literal that opens with a route's path: "/v1…" or "/metrics". */
const ROUTE_LITERAL = /["'`]\/(?:v1(?:[/"'`?])|metrics["'`])/

/**
 * The line with its prose strings emptied: a double-quoted string with a space in it is text (a doc
 * line naming `/v1/ws` in a markdown code span, src/runtime/config.ts), never a path.
 */
const withoutProse = (line: string): string => {
  // Walk the line's double-quoted strings in order (so a quote closing one never opens the next).
  let out = ""
  for (let k = 0; k < line.length; k++) {
    if (line[k] !== '"') {
      out += line[k]
      continue
    }
    let end = k + 1
    while (end < line.length && line[end] !== '"') end += line[end] === "\\" ? 2 : 1
    const body = line.slice(k + 1, end)
    out += /\s/.test(body) ? '""' : `"${body}"`
    k = end
  }
  return out
}

/** `file:line text` of each route literal in `files` (comments and prose strings ignored). */
export const routeLiterals = (files: ReadonlyArray<string>): string[] =>
  files.flatMap((f) =>
    stripComments(readFileSync(f, "utf8"))
      .split("\n")
      .flatMap((line, i) => (ROUTE_LITERAL.test(withoutProse(line)) ? [`${relative(root, f)}:${i + 1} ${line.trim()}`] : []))
  )

/**
 * Where a route's path may be written besides the table: src/ops sits below the routes (the
 * layering test) and cannot import the table; it names the probes it logs quietly and the
 * order route it counts, by the template the router reports.
 */
const ROUTE_LITERAL_EXCEPTIONS = new Set(["src/api/declaration/table.ts", "src/ops/requests.ts"])

describe("routes come from the declaration", () => {
  it("no source of the service or the client writes a route's path but the route table", () => {
    const files = sourceFiles(join(root, "src")).filter((f) => !ROUTE_LITERAL_EXCEPTIONS.has(relative(root, f)))
    expect(files.length).toBeGreaterThan(100)
    expect(routeLiterals(files)).toEqual([])
  })

  it("the scan finds a route written by hand", () => {
    expect(routeLiterals([join(root, "src", "ops", "requests.ts")]).length).toBeGreaterThan(0)
    const tmp = join(root, "test", "api", "declaration.test.ts")
    // This file writes paths in strings (the control) and in comments (ignored).
    expect(routeLiterals([tmp]).some((l) => l.includes('"/v1/nowhere"'))).toBe(true)
  })

  it("the router is the declaration's: every route's method and path from the table", () => {
    const table = (t: Readonly<Record<string, Readonly<Record<string, { method: string; path: string }>>>>) => Object.values(t).flatMap((g) => Object.values(g)).map(key).sort()
    expect(makeRouter().list().map(key).sort()).toEqual(table(API_TABLE))
    expect(Object.values(DEPOSIT).flatMap((g) => Object.values(g)).map(key).sort()).toEqual(table(DEPOSIT_TABLE))
  })
})

/** Fake answers per route, enough for the composite methods (withdraw reads the wallet first). */
const recordingFetch = (calls: Array<{ method: string; url: string }>) =>
  (async (url: string, init?: { method?: string }) => {
    calls.push({ method: init?.method ?? "GET", url })
    const path = new URL(url).pathname
    const body = path.startsWith("/v1/wallet/") ? { user: "u", wallet: `0x${"1".repeat(40)}` } : path === "/v1/markets" ? { markets: [], total: 0, limit: 0, offset: 0 } : { last_order_nonce: 0, last_withdraw_nonce: 0 }
    return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } })
  }) as never

const declaredLines = [...Object.values(API_TABLE), ...Object.values(DEPOSIT_TABLE)].flatMap((g) => Object.values(g))
const matchesLine = (method: string, path: string) =>
  declaredLines.some((l) => {
    const want = l.path.split("/")
    const got = path.split("/")
    return l.method === method && want.length === got.length && want.every((s: string, i: number) => (s.startsWith(":") ? got[i] !== "" : s === got[i]))
  })

describe("the client calls only declared routes", () => {
  /** Every method of the client with arguments to call it; composites (several calls) included. */
  const calls = (c: ApiClient): Record<string, () => Promise<unknown>> => ({
    markets: () => c.markets({ status: "active", neg_risk: true, limit: 5 }),
    allMarkets: () => c.allMarkets(),
    market: () => c.market("m"),
    book: () => c.book("m"),
    marketTrades: () => c.marketTrades("m", { limit: 2 }),
    candles: () => c.candles("m", { interval: "1h" }),
    balance: () => c.balance(),
    position: () => c.position("m"),
    positions: () => c.positions(),
    orders: () => c.orders(),
    trades: () => c.trades(),
    deposits: () => c.deposits(),
    withdrawals: () => c.withdrawals(),
    wallet: () => c.wallet(),
    fees: () => c.fees(),
    rewardsConfig: () => c.rewardsConfig(),
    rewardsMe: () => c.rewardsMe(),
    rewardsWallet: () => c.rewardsWallet("w"),
    leaderboard: () => c.leaderboard({ days: 7 }),
    depositAddress: () => c.depositAddress("0xabc"),
    depositProgress: () => c.depositProgress("0xabc"),
    lpStatus: () => c.lpStatus(),
    nonces: () => c.nonces(),
    syncNonces: () => c.syncNonces(),
    faucet: () => c.faucet("0xabc", 1),
    register: () => c.register("n"),
    placeOrder: () => c.placeOrder({ market_id: "ab".repeat(32), side: "buy", outcome: "yes", price: 5_000, size: 1 }),
    cancel: () => c.cancel(1),
    cancelAll: () => c.cancelAll("m"),
    linkWallet: () => c.linkWallet(`0x${"1".repeat(40)}`, () => `0x${"2".repeat(130)}`),
    withdraw: () => c.withdraw(1),
    lpSessionNew: () => c.lpSessionNew(),
    lpDelegate: () => {
      const fields = { user: c.user, sessionPub: c.user, scope: "orders" as const, expiresAtUnix: 1_900_000_000, nonce: 1 }
      const hex = Array.from(delegationMessage(fields), (b) => b.toString(16).padStart(2, "0")).join("")
      return c.lpDelegate({ user: c.user, session_pub: c.user, scope: "orders", expires_at_unix: fields.expiresAtUnix, nonce: 1, message_bytes_hex: hex, created_at: 0 })
    },
    lpStart: () => c.lpStart("s", ["m"], { preset: "balanced", capital_micro_usdc: 1 } as never),
    lpStop: () => c.lpStop(),
    lpLaunch: () => c.lpLaunch(["m"], { preset: "balanced", capital_micro_usdc: 1 } as never).catch(() => undefined)
  })
  /** Methods that are not calls of a route. */
  const NOT_CALLS = new Set(["constructor", "request", "call", "nextNonce", "signOut", "user", "lastNonce", "registerWith"])

  it("every method's requests are declared routes with their declared methods, and every method is checked", async () => {
    const seen: Array<{ method: string; url: string }> = []
    const c = new ApiClient("http://api.test", keyFromLabel("declaration-client"), recordingFetch(seen), () => 1_800_000_000, { depositUrl: "http://deposit.test" })
    const methods = [ApiClient.prototype, PublicClient.prototype].flatMap((p) => Object.getOwnPropertyNames(p)).filter((m) => !NOT_CALLS.has(m))
    const exercised = calls(c)
    expect([...new Set(methods)].filter((m) => !(m in exercised))).toEqual([])
    for (const [name, run] of Object.entries(exercised)) {
      seen.length = 0
      await run()
      expect(seen.length, name).toBeGreaterThan(0)
      for (const { method, url } of seen) {
        const { pathname, origin } = new URL(url)
        expect(matchesLine(method, pathname), `${name}: ${method} ${pathname}`).toBe(true)
        expect(origin, name).toBe(pathname.startsWith("/v1/deposit/") ? "http://deposit.test" : "http://api.test")
      }
    }
  })

  it("a path's parameters are typed from the route table", () => {
    const c = new PublicClient("http://api.test", recordingFetch([]))
    // @ts-expect-error: the balance route's parameter is `user`
    void c.call(API_TABLE.account.balance, { path: { usr: "x" } })
    // @ts-expect-error: a route with parameters needs them
    void c.call(API_TABLE.account.balance, {})
    expect(matchesLine("GET", "/v1/balance/x")).toBe(true)
    expect(matchesLine("POST", "/v1/balance/x")).toBe(false)
  })
})

/** The field names of each declared wire shape and request body (an identifier annotation names it). */
const declaredShapes = (): Map<string, string> => {
  const shapes = new Map<string, string>()
  for (const value of [...Object.values(W), ...Object.values(Declared), ...Object.values(Dev)]) {
    if (!Schema.isSchema(value) || !SchemaAST.isTypeLiteral(value.ast)) continue
    const id = SchemaAST.getIdentifierAnnotation(value.ast)
    if (id._tag === "None" || value.ast.propertySignatures.length < 3) continue
    shapes.set(value.ast.propertySignatures.map((p) => String(p.name)).sort().join(","), id.value)
  }
  return shapes
}

/** `file: Name repeats Shape` for each interface or object type in `files` whose fields are exactly a declared shape's, and the exported interfaces of one name in two files. */
export const wireCopies = (files: ReadonlyArray<string>, shapes: ReadonlyMap<string, string>): string[] => {
  const out: string[] = []
  const byName = new Map<string, string[]>()
  for (const f of files) {
    const sf = ts.createSourceFile(f, readFileSync(f, "utf8"), ts.ScriptTarget.Latest, true)
    const visit = (node: ts.Node): void => {
      const members = ts.isInterfaceDeclaration(node) || ts.isTypeLiteralNode(node) ? node.members : undefined
      const exported = ts.isInterfaceDeclaration(node) && (node.modifiers ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
      if (ts.isInterfaceDeclaration(node) && exported) byName.set(node.name.text, [...(byName.get(node.name.text) ?? []), relative(root, f)])
      if (members !== undefined) {
        const names = members.flatMap((m) => (m.name !== undefined && (ts.isIdentifier(m.name) || ts.isStringLiteral(m.name)) ? [m.name.text] : [])).sort().join(",")
        const shape = shapes.get(names)
        if (shape !== undefined) out.push(`${relative(root, f)}: ${ts.isInterfaceDeclaration(node) ? node.name.text : "a type literal"} repeats ${shape}`)
      }
      ts.forEachChild(node, visit)
    }
    visit(sf)
  }
  for (const [name, where] of byName) if (where.length > 1 && !NAMES_REUSED.has(name)) out.push(`${name} is declared in ${where.join(" and ")}`)
  return out.filter((line) => !RECORDS.has(line))
}

/**
 * The domain's own records whose fields the wire shape repeats: the stored or computed value the
 * wire shape is a view of (mutable, typed with the chain's Address, or below the wire's folder).
 * Listed so a new copy is not waved through; each is a candidate to derive from the wire type.
 */
const RECORDS = new Set([
  "src/service/catalog.ts: OutcomeMarket repeats OutcomeMarket",
  "src/service/catalog.ts: NewEvent repeats CreateEventRequest",
  "src/service/history.ts: TradeRecord repeats Trade",
  "src/service/history.ts: Candle repeats Candle",
  "src/time/clock.ts: ClockStatus repeats ClockStatus",
  "src/usecase/faucet.ts: FaucetResult repeats FaucetResponse"
])

/**
 * Interface names declared more than once on purpose: two LP `Delegation`s (the book's record and
 * the use case's input, different fields); `ErrorBody` in the client (its package ships without
 * src/domain, which loads Effect) and the web page's reading of it.
 */
const NAMES_REUSED = new Set(["Delegation", "ErrorBody"])

describe("wire types are declared once", () => {
  const where = [
    ...sourceFiles(join(root, "src")),
    ...sourceFiles(join(root, "web", "src")),
    ...tsxFiles(join(root, "web", "src")),
    join(root, "web", "server.ts")
  ].filter((f) => !f.startsWith(join(root, "src", "domain")) && !f.startsWith(join(root, "src", "api", "declaration")))

  it("no interface or object type repeats a declared shape, and no interface name is declared twice", () => {
    expect(declaredShapes().size).toBeGreaterThan(30)
    expect(wireCopies(where, declaredShapes())).toEqual([])
  })

  it("the scan finds a copy: a shape, and a name declared twice (as OpenOrder and WebConfig were)", () => {
    const shapes = declaredShapes()
    const copies = wireCopies([join(root, "test", "api", "fixtures", "wire-copies.ts"), join(root, "web", "src", "web-config.ts")], shapes)
    expect(copies.map((c) => c.replace(/^.*?: /, ""))).toEqual(["OpenOrder repeats RestingOrder", "a type literal repeats Balance", "WebConfig is declared in test/api/fixtures/wire-copies.ts and web/src/web-config.ts"])
  })

  it("the client's request and query types are the declaration's (types.ts derives them)", () => {
    expectTypeOf<Client.OrderRequest>().toEqualTypeOf<Schema.Schema.Encoded<typeof Declared.OrderRequest>>()
    expectTypeOf<Client.RegisterRequest>().toEqualTypeOf<Schema.Schema.Encoded<typeof Declared.RegisterRequest>>()
    expectTypeOf<Client.WithdrawRequest>().toEqualTypeOf<Schema.Schema.Encoded<typeof Declared.WithdrawRequest>>()
    expectTypeOf<Client.LpStartRequest>().toEqualTypeOf<Schema.Schema.Encoded<typeof Declared.LpStartRequest>>()
    expectTypeOf<Client.FaucetRequest>().toEqualTypeOf<Schema.Schema.Encoded<typeof Dev.FaucetRequest>>()
    expectTypeOf<NonNullable<Client.CandlesQuery["interval"]>>().toEqualTypeOf<Schema.Schema.Type<typeof W.CandleInterval>>()
    expectTypeOf<NonNullable<Client.MarketsQuery["neg_risk"]>>().toEqualTypeOf<boolean>()
  })
})

/** The .tsx files under `dir` (the web app's pages; sourceFiles takes .ts). */
function tsxFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n)
    return statSync(p).isDirectory() ? tsxFiles(p) : p.endsWith(".tsx") ? [p] : []
  })
}
