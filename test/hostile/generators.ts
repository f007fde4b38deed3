// Generators of hostile input for the hostile suite: HTTP requests built from the
// served OpenAPI document (every operation, with wrong types, missing and extra
// fields, odd numbers and strings, broken and oversize bodies, wrong content types,
// bad cookies and headers), raw bytes for a TCP socket, and WebSocket frames.
import fc from "fast-check"

export interface HostileRequest {
  readonly method: string
  readonly path: string
  readonly headers: Record<string, string>
  readonly body?: string
  /** Which loopback source address sends it (the rate limiters see many clients). */
  readonly from: number
}

/** What the generator may use that makes a request reach deeper than the first check. */
export interface Fixtures {
  readonly users: ReadonlyArray<string>
  readonly cookies: ReadonlyArray<string>
  readonly markets: ReadonlyArray<string>
  readonly slugs: ReadonlyArray<string>
  readonly allowedOrigin: string
  readonly adminToken: string
}

type JsonSchema = Record<string, any>

/** Percent-encodes any string (encodeURIComponent throws on a lone surrogate). */
const pct = (s: string): string => Array.from(Buffer.from(s, "utf8"), (b) => (/[A-Za-z0-9_.~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, "0")}`)).join("")

const STRANGE_STRINGS = [
  "",
  " ",
  "\u0000",
  "\uFFFF",
  "\uD800", // a lone surrogate
  "\u202E\u202D",
  "😀".repeat(200),
  "a".repeat(5_000),
  "%00",
  "%",
  "%ZZ",
  "../../../../etc/passwd",
  "NaN",
  "Infinity",
  "-0",
  "1e309",
  "null",
  "true",
  "[]",
  "{}",
  "<script>alert(1)</script>",
  "'; DROP TABLE trades; --",
  "0x",
  "0x" + "f".repeat(40),
  "1".repeat(44),
  "4uQeVj5tqViQh7yWWGStvkEG1Zmhx6uasJtWCJziofM", // the identity point
  "__proto__",
  "constructor"
]

export const strangeString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...STRANGE_STRINGS),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ unit: "grapheme-ascii", maxLength: 300 })
)

/** Numbers as JSON text, including what JSON.stringify would never write. */
const strangeNumberText: fc.Arbitrary<string> = fc.oneof(
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
  fc.constantFrom("-1", "0", "-0", "0.5", "1e308", "1e309", "-1e309", "9007199254740993", "18446744073709551616", "1E2", "01", "1.", ".5", "NaN", "Infinity", "-Infinity", "0x10"),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String)
)

/** A JSON value of any type, as text: the wrong type for most fields. */
const anyValueText: fc.Arbitrary<string> = fc.oneof(
  strangeNumberText,
  strangeString.map((s) => JSON.stringify(s)),
  fc.constantFrom("null", "true", "false", "[]", "{}", "[1,2,3]", '{"a":1}', '[""]'),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? "null")
)

/** A plausible value for a field, from its name and schema: the part that makes a request get past the shape check. */
const plausible = (name: string, schema: JsonSchema, fx: Fixtures): fc.Arbitrary<string> => {
  const j = (a: fc.Arbitrary<unknown>) => a.map((v) => JSON.stringify(v))
  switch (name) {
    case "user":
    case "session_pub":
      return j(fc.constantFrom(...fx.users))
    case "market_id":
      return j(fc.constantFrom(...fx.markets, ...fx.slugs))
    case "markets":
      return j(fc.array(fc.constantFrom(...fx.markets, ...fx.slugs), { minLength: 1, maxLength: 3 }))
    case "signature":
      return j(fc.oneof(fc.uint8Array({ minLength: 64, maxLength: 64 }).map((b) => Buffer.from(b).toString("hex")), fc.constant("")))
    case "evm_signature":
      return j(fc.uint8Array({ minLength: 65, maxLength: 65 }).map((b) => `0x${Buffer.from(b).toString("hex")}`))
    case "wallet":
      return j(fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => `0x${Buffer.from(b).toString("hex")}`))
    case "timestamp":
      return fc.constantFrom("1795305600", "1795305599", "0")
    case "strategy":
      return j(fc.record({ mode: fc.constantFrom("simple", "advanced", "x"), capital_micro_usdc: fc.integer({ min: -1, max: 10_000_000_000 }), preset: fc.constantFrom("balanced", "aggressive", "?") }))
  }
  if (Array.isArray(schema.enum)) return j(fc.constantFrom(...schema.enum))
  if ("const" in schema) return j(fc.constant(schema.const))
  switch (schema.type) {
    case "integer":
      return fc.integer({ min: typeof schema.minimum === "number" ? schema.minimum : -5, max: typeof schema.maximum === "number" ? Math.min(schema.maximum, 2 ** 40) : 100_000 }).map(String)
    case "number":
      return fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }).map((d) => JSON.stringify(d))
    case "boolean":
      return j(fc.boolean())
    case "string":
      return j(fc.string({ maxLength: 20 }))
    case "array":
      return fc.array(anyValueText, { maxLength: 3 }).map((xs) => `[${xs.join(",")}]`)
    default:
      return anyValueText
  }
}

/** A body for an object schema: each field plausible, wrong or missing, plus extra fields sometimes. */
const objectBody = (schema: JsonSchema | undefined, fx: Fixtures): fc.Arbitrary<string> => {
  const props: Record<string, JsonSchema> = schema?.properties ?? {}
  const fields = Object.entries(props).map(([name, s]) =>
    fc
      .oneof(
        { weight: 6, arbitrary: plausible(name, s, fx).map((v) => [name, v] as const) },
        { weight: 3, arbitrary: anyValueText.map((v) => [name, v] as const) },
        { weight: 2, arbitrary: fc.constant(null) }
      )
      .map((e) => (e === null ? [] : [e]))
  )
  const extras = fc.array(fc.tuple(strangeString, anyValueText), { maxLength: 3 })
  return fc.tuple(fc.tuple(...fields), extras).map(([parts, extra]) => {
    const entries = [...parts.flat(), ...extra]
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(",")}}`
  })
}

/** Ways to break an otherwise fine body. */
const mangle = (body: string): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 8, arbitrary: fc.constant(body) },
    { weight: 1, arbitrary: fc.nat({ max: Math.max(0, body.length) }).map((n) => body.slice(0, n)) },
    { weight: 1, arbitrary: fc.tuple(fc.nat({ max: Math.max(0, body.length) }), strangeString).map(([n, s]) => body.slice(0, n) + s + body.slice(n)) },
    { weight: 1, arbitrary: fc.constantFrom("", "null", "[]", "1", '"x"', "{", "}{", "\u0000", "{\"a\":}", "{'a':1}") },
    { weight: 1, arbitrary: fc.integer({ min: 21, max: 4_000 }).map((d) => "[".repeat(d) + "]".repeat(d)) },
    { weight: 1, arbitrary: fc.integer({ min: 21, max: 3_000 }).map((d) => `{"user":${'{"a":'.repeat(d)}1${"}".repeat(d)}}`) },
    { weight: 1, arbitrary: fc.constant(`{"pad":"${"x".repeat(70_000)}"}`) } // over the 64 KiB limit
  )

const contentType = fc.oneof(
  { weight: 12, arbitrary: fc.constant<string | null>("application/json") },
  { weight: 1, arbitrary: fc.constantFrom<string | null>(null, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "APPLICATION/JSON; charset=utf-16", "application/jsonx", "", "application/json;;;") }
)

/** Hands the path a value for a `{param}`: a real one or something strange, percent-encoded or not. */
const pathValue = (name: string, fx: Fixtures): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...(name === "user" || name === "wallet" || name === "pubkey" ? fx.users : name === "user_address" ? ["0x8ba1f109551bD432803012645Ac136ddd64DBA72"] : [...fx.markets, ...fx.slugs])) },
    { weight: 2, arbitrary: strangeString.map((s) => pct(s).slice(0, 2_000)) },
    { weight: 1, arbitrary: fc.constantFrom("%", "%ZZ", "..", ".", "%2F", "a%00b", "x".repeat(3_000)) }
  )

export interface Operation {
  readonly method: string
  readonly path: string
  readonly query: ReadonlyArray<{ name: string; schema: JsonSchema }>
  readonly body: JsonSchema | undefined
}

/** Operations of a served OpenAPI document, with `$ref`s of request bodies resolved. */
export const operationsOf = (doc: any): Operation[] => {
  const resolve = (s: JsonSchema | undefined): JsonSchema | undefined => (s?.$ref === undefined ? s : doc.components.schemas[String(s.$ref).split("/").pop()!])
  return Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      query: ((op.parameters ?? []) as any[]).filter((p) => p.in === "query").map((p) => ({ name: p.name, schema: p.schema })),
      body: resolve(op.requestBody?.content?.["application/json"]?.schema)
    }))
  )
}

const queryString = (op: Operation): fc.Arbitrary<string> => {
  if (op.query.length === 0) return fc.oneof(fc.constant(""), strangeString.map((s) => `?${pct(s)}=${pct(s)}`))
  return fc
    .array(
      fc.tuple(
        fc.constantFrom(...op.query),
        fc.oneof(
          plausible("", op.query[0]!.schema, { users: [], cookies: [], markets: [], slugs: [], allowedOrigin: "", adminToken: "" }).map((v) => v.replace(/^"|"$/g, "")),
          strangeNumberText,
          strangeString
        )
      ),
      { maxLength: 4 }
    )
    .map((pairs) => (pairs.length === 0 ? "" : `?${pairs.map(([p, v]) => `${p.name}=${pct(v)}`).join("&")}`))
}

const authHeaders = (fx: Fixtures): fc.Arbitrary<Record<string, string>> =>
  fc
    .record({
      cookie: fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom(...fx.cookies) },
        { weight: 2, arbitrary: fc.constant<string | null>(null) },
        { weight: 1, arbitrary: strangeString.map((s) => `service_oracle_session=${pct(s)}`) },
        { weight: 1, arbitrary: fc.constant(`service_oracle_session=${"A".repeat(4_000)}`) }
      ),
      origin: fc.oneof(
        { weight: 5, arbitrary: fc.constant<string | null>(null) },
        { weight: 2, arbitrary: fc.constantFrom(fx.allowedOrigin, "https://evil.example", "null", "http://localhost:3000") }
      ),
      fetchSite: fc.constantFrom<string | null>(null, null, null, "cross-site", "same-origin"),
      authorization: fc.oneof(
        { weight: 6, arbitrary: fc.constant<string | null>(null) },
        { weight: 1, arbitrary: fc.constant(`Bearer ${fx.adminToken}`) },
        { weight: 1, arbitrary: strangeString.map((s) => `Bearer ${pct(s)}`) }
      )
    })
    .map(({ cookie, origin, fetchSite, authorization }) => {
      const h: Record<string, string> = {}
      if (cookie !== null) h.cookie = cookie
      if (origin !== null) h.origin = origin
      if (fetchSite !== null) h["sec-fetch-site"] = fetchSite
      if (authorization !== null) h.authorization = authorization
      return h
    })

/** One hostile request against one operation of the document. */
export const requestFor = (op: Operation, fx: Fixtures): fc.Arbitrary<HostileRequest> => {
  const params = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => pathValue(m[1]!, fx))
  const path = fc.tuple(...params).map((values) => {
    let i = 0
    return op.path.replace(/\{(\w+)\}/g, () => values[i++]!)
  })
  const method = fc.oneof({ weight: 12, arbitrary: fc.constant(op.method) }, { weight: 1, arbitrary: fc.constantFrom("HEAD", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE") })
  const body = op.body === undefined ? fc.option(fc.constantFrom("{}", "x"), { nil: undefined }) : objectBody(op.body, fx).chain(mangle)
  return fc
    .record({ method, path, query: queryString(op), body, contentType, auth: authHeaders(fx), from: fc.integer({ min: 2, max: 250 }) })
    .map(({ method: m, path: p, query: qs, body: b, contentType: ct, auth, from }) => ({
      method: m,
      path: p + qs,
      headers: { ...auth, ...(ct === null || b === undefined ? {} : { "content-type": ct }) },
      ...(b === undefined || m === "GET" || m === "HEAD" ? {} : { body: b }),
      from
    }))
}

/** Raw bytes for a TCP connection to the HTTP port: malformed, oversized, truncated. */
export const rawGarbage: fc.Arbitrary<{ chunks: ReadonlyArray<string>; close: boolean }> = fc.record({
  chunks: fc.oneof(
    fc.constantFrom(
      ["GET\r\n\r\n"],
      ["FOO / HTTP/1.1\r\n\r\n"],
      ["GET / HTTP/9.9\r\nHost: x\r\n\r\n"],
      ["GET /v1/markets HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n"],
      ["POST /v1/orders HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n"],
      ["POST /v1/orders HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello"],
      ["POST /v1/orders HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\ncontent-type: application/json\r\n\r\nzz\r\nxx\r\n0\r\n\r\n"],
      ["POST /v1/orders HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{\"a"],
      ["GET /v1/markets HTTP/1.1\r\nBad Header Without Colon\r\n\r\n"],
      [`GET /v1/markets HTTP/1.1\r\nHost: x\r\nX-Long: ${"a".repeat(20_000)}\r\n\r\n`],
      [`GET /${"a".repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`],
      ["GET /v1/markets HTTP/1.1\r\n", "Host: x\r\n", "\r\n"],
      ["\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"], // a TLS ClientHello on the plain port
      ["PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"]
    ),
    fc.array(fc.string({ unit: "binary-ascii", maxLength: 200 }), { minLength: 1, maxLength: 3 })
  ),
  close: fc.boolean()
})

/** WebSocket frames: valid-looking, wrong-typed, garbage, storms. */
export const wsFrame = (fx: Fixtures): fc.Arbitrary<string> =>
  fc.oneof(
    fc.record({ type: fc.constantFrom("subscribe", "unsubscribe", "ping", "pong", "x", ""), channel: fc.oneof(fc.constantFrom(...fx.markets.flatMap((m) => [`book:${m}`, `trades:${m}`]), ...fx.users.map((u) => `user:${u}`)), strangeString, fc.integer()) }).map((f) => JSON.stringify(f)),
    fc.record({ type: fc.constant("subscribe"), channel: fc.constantFrom(...fx.users.map((u) => `user:${u}`)), signature: fc.oneof(strangeString, fc.uint8Array({ minLength: 64, maxLength: 64 }).map((b) => Buffer.from(b).toString("hex"))), timestamp: fc.oneof(fc.integer(), strangeString) }).map((f) => JSON.stringify(f)),
    anyValueText,
    strangeString,
    fc.integer({ min: 21, max: 5_000 }).map((d) => `{"type":"subscribe","channel":${"[".repeat(d)}${"]".repeat(d)}}`)
  )
