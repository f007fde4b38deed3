// Every response the black-box suite receives is checked against the API declaration
// (src/api/declaration/api.ts): the route's declared schema for that status decodes the
// body, with no field beyond it. The fast router serves the API; this is what keeps it and
// the declaration (hence the OpenAPI document and the client's types) the same.
import { HttpApi, HttpApiError, HttpApiSchema } from "@effect/platform"
import { Either, Option, ParseResult, Schema, type SchemaAST } from "effect"
import { ERROR_STATUS, type ErrorCode, errorEnvelope } from "../../src/domain/errors.ts"

interface DeclaredRoute {
  readonly method: string
  readonly path: string
  readonly segments: ReadonlyArray<string>
  /** Status → body AST (none: no body, e.g. the upgrade's 101). */
  readonly responses: ReadonlyMap<number, Option.Option<SchemaAST.AST>>
}

/** The declared routes of an API, read back from the HttpApi itself. */
export const declaredRoutes = (api: HttpApi.HttpApi.Any): DeclaredRoute[] => {
  const routes: DeclaredRoute[] = []
  HttpApi.reflect(api as never, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, successes, errors }) => {
      const responses = new Map<number, Option.Option<SchemaAST.AST>>()
      for (const [status, { ast }] of successes) responses.set(status, ast)
      // HttpApi's own decode error is not this server's 400 (the declaration's document drops it too).
      for (const [status, { ast }] of errors) {
        if (Option.isNone(ast)) continue
        const own = ast.value._tag === "Union" ? ast.value.types.filter((t) => !isDecodeError(t)) : isDecodeError(ast.value) ? [] : [ast.value]
        if (own.length > 0) responses.set(status, Option.some(own.length === 1 ? own[0]! : Schema.Union(...own.map((a) => Schema.make(a))).ast))
      }
      routes.push({ method: endpoint.method, path: endpoint.path, segments: endpoint.path.split("/").filter((s) => s !== ""), responses })
    }
  })
  return routes
}

const isDecodeError = (ast: SchemaAST.AST): boolean => ast === HttpApiError.HttpApiDecodeError.ast

/** As the router matches (src/api/http.ts): a parameter segment must percent-decode. */
const matches = (route: DeclaredRoute, parts: ReadonlyArray<string>): boolean =>
  route.segments.length === parts.length && route.segments.every((s, i) => (s.startsWith(":") ? decodes(parts[i]!) : s === parts[i]))

const decodes = (segment: string): boolean => {
  try {
    decodeURIComponent(segment)
    return true
  } catch {
    return false
  }
}

/** Any code of the catalogue: answers that come before routing (404 no route, 405, malformed HTTP). */
const AnyError = errorEnvelope(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]])

const decodeStrict = (ast: SchemaAST.AST, body: unknown): string | null => {
  const result = Schema.decodeUnknownEither(Schema.make(ast), { onExcessProperty: "error" })(body)
  return Either.isRight(result) ? null : ParseResult.TreeFormatter.formatErrorSync(result.left)
}

/** Why a response does not conform to the declaration, or null when it does. */
export const nonConformance = (routes: ReadonlyArray<DeclaredRoute>, method: string, path: string, status: number, contentType: string, text: string): string | null => {
  if (method === "OPTIONS") return null
  const parts = path.split("/").filter((s) => s !== "")
  const asMethod = method === "HEAD" ? "GET" : method
  const route = routes.find((r) => r.method === asMethod && matches(r, parts))
  const json = (): unknown => {
    try {
      return JSON.parse(text)
    } catch {
      return Symbol.for("not json")
    }
  }
  if (route === undefined) {
    if (status < 400) return `${method} ${path} answered ${status} but no declared route matches it`
    if (method === "HEAD") return null
    const body = json()
    const why = decodeStrict(AnyError.ast, body)
    if (why !== null) return `${method} ${path} ${status}: not the error envelope\n${why}`
    const code = (body as { error: ErrorCode }).error
    return ERROR_STATUS[code] === status ? null : `${method} ${path}: ${code} answered with ${status}, its status is ${ERROR_STATUS[code]}`
  }
  const declared = route.responses.get(status)
  if (declared === undefined) return `${method} ${route.path} answered ${status} (${text.slice(0, 200)}), which its declaration does not list (declared: ${[...route.responses.keys()].join(", ")})`
  if (method === "HEAD" || Option.isNone(declared) || HttpApiSchema.getEmptyDecodeable(declared.value)) return null
  const encoding = HttpApiSchema.getEncoding(declared.value)
  if (encoding.kind !== "Json") return contentType.startsWith(encoding.contentType) ? null : `${method} ${route.path} ${status}: content-type ${contentType}, declared ${encoding.contentType}`
  if (!contentType.startsWith("application/json")) return `${method} ${route.path} ${status}: content-type ${contentType}, declared application/json`
  const why = decodeStrict(declared.value, json())
  return why === null ? null : `${method} ${route.path} ${status} does not match its declared schema\n${why}\nbody: ${text.slice(0, 500)}`
}

/** A response that broke the declaration: thrown by the checking fetch, so the test that caused it fails. */
export class NonConformingResponse extends Error {}

/**
 * `fetch` that checks every response from `baseUrl` against `api`'s declaration and throws
 * NonConformingResponse on a mismatch. The caller still reads the body (it is cloned).
 */
export const conformingFetch = (api: HttpApi.HttpApi.Any, baseUrl: string, inner: typeof fetch = fetch): typeof fetch => {
  const routes = declaredRoutes(api)
  return (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    const res = await inner(input, init)
    const url = new URL(typeof input === "string" ? input : input instanceof URL ? input.href : input.url)
    if (!url.href.startsWith(baseUrl)) return res
    const method = (init?.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase()
    const why = nonConformance(routes, method, url.pathname, res.status, res.headers.get("content-type") ?? "", await res.clone().text())
    if (why !== null) throw new NonConformingResponse(why)
    return res
  }) as typeof fetch
}
