// The router, built from the declaration (src/api/declaration): each declared group is
// implemented by one handler per route (src/api/routes/*.ts), and every route is served with
// its declared method and path. Before a handler the router runs, in this order and once for
// all routes: the route's declared preamble (buckets, session, operator token, closed
// surfaces: ./steps.ts), the JSON body of a POST (400 invalid_json), the body's schema, then
// the path and query parameters' schemas; the handler is handed the decoded, typed values.
// The fast router itself is unchanged (./http.ts; docs/decisions.md "A transport-free HTTP core").
import { Schema, SchemaAST } from "effect"
import type { ErrorCode } from "../domain/errors.ts"
import { decodeBody } from "../domain/schemas.ts"
import { EmptyIsAbsent, type Group, type RouteSpec, type Step } from "./declaration/endpoint.ts"
import { type HttpRequest, type HttpResponse, parseJsonBody, type Route, Router } from "./http.ts"

type Fields<R, K extends "pathParams" | "query"> = R extends { readonly [P in K]: infer F extends Schema.Struct.Fields } ? Schema.Struct.Type<F> : Readonly<Record<string, never>>

/** What a handler is handed: the request's parts as the route declares them, decoded. */
export interface Input<R> {
  readonly body: R extends { readonly body: infer S extends Schema.Schema.Any } ? Schema.Schema.Type<S> : undefined
  readonly path: Fields<R, "pathParams">
  readonly query: Fields<R, "query">
  /** The session cookie's user, when the preamble requires the session. */
  readonly session: R extends { readonly preamble: ReadonlyArray<infer S> } ? ("session" extends S ? string : undefined) : undefined
  /** The JSON body as parsed, before its schema dropped unknown fields ({} for a GET). */
  readonly raw: Readonly<Record<string, unknown>>
  readonly req: HttpRequest
}

export type Handler<C, R> = (ctx: C, input: Input<R>) => HttpResponse | Promise<HttpResponse>

/** One handler for each route of a group, and no other (the declaration names them). */
export type Implementation<C, G extends Group> = { readonly [N in keyof G]: Handler<C, G[N]> }

/** One group's implementation for every group of a declaration. */
export type Implementations<C, D extends Readonly<Record<string, Group>>> = { readonly [G in keyof D]: Implementation<C, D[G]> }

/** What the preamble's steps share within one request: the session user once "session" ran. */
export interface StepState {
  session: string | undefined
}

/** The preamble's steps for one context type (./steps.ts for the API's). */
export type Steps<C> = { readonly [S in Step]?: (ctx: C, req: HttpRequest, state: StepState) => void }

const NO_FIELDS: Readonly<Record<string, never>> = {}

/** True when every field is a plain string, so the parameters are already their decoded value. */
const allPlainStrings = (fields: Schema.Struct.Fields): boolean =>
  Object.values(fields).every((f) => Schema.isSchema(f) && SchemaAST.isStringKeyword(f.ast))

/** Decodes parameters (path or query) with the declared fields; a refusal names the field and takes its declared code. */
const paramDecoder = (fields: Schema.Struct.Fields | undefined, codeOf: (field: string) => ErrorCode) => {
  if (fields === undefined) return (_raw: Readonly<Record<string, string>>) => NO_FIELDS
  if (allPlainStrings(fields)) return (raw: Readonly<Record<string, string>>) => raw
  return decodeBody(Schema.Struct(fields) as unknown as Schema.Schema<unknown, unknown, never>, "invalid_query", undefined, codeOf)
}

/** Whether a field's empty value means absent (src/api/declaration/endpoint.ts `EmptyIsAbsent`). */
const emptyIsAbsent = (field: Schema.Struct.Field): boolean => {
  const has = (ast: SchemaAST.AST): boolean => ast.annotations[EmptyIsAbsent] === true || (SchemaAST.isUnion(ast) && ast.types.some(has))
  const ast = field.ast
  return has(ast._tag === "PropertySignatureDeclaration" ? ast.type : (ast as SchemaAST.AST))
}

/** Reads the declared query parameters (the first of a repeated one); an empty value is absent where the field says so. */
const queryReader = (fields: Schema.Struct.Fields | undefined) => {
  const names = Object.entries(fields ?? {}).map(([name, f]) => ({ name, dropEmpty: emptyIsAbsent(f) }))
  return (q: URLSearchParams): Record<string, string> => {
    const out: Record<string, string> = {}
    for (const { name, dropEmpty } of names) {
      const v = q.get(name)
      if (v !== null && !(dropEmpty && v === "")) out[name] = v
    }
    return out
  }
}

/** A declared route with its handler, served: preamble, body, parameters, handler. */
const serveRoute = <C>(spec: RouteSpec, handler: Handler<C, never>, steps: Steps<C>, where: string): Route<C> => {
  const preamble = (spec.preamble ?? []).map((s) => {
    const step = steps[s]
    if (step === undefined) throw new Error(`${where}: no implementation of the preamble step "${s}"`)
    return step
  })
  const fieldCode = (fallback: ErrorCode) => (field: string): ErrorCode => spec.fieldErrors?.[field] ?? fallback
  const bodyCode = spec.bodyError ?? "invalid_shape"
  const body = spec.body === undefined ? undefined : decodeBody(spec.body as Schema.Schema<unknown, unknown, never>, bodyCode, spec.fastBody, fieldCode(bodyCode))
  const path = paramDecoder(spec.pathParams, fieldCode("invalid_query"))
  const readQuery = spec.query === undefined ? undefined : queryReader(spec.query)
  const query = paramDecoder(spec.query, fieldCode("invalid_query"))
  const isPost = spec.method === "POST"
  return {
    method: spec.method,
    path: spec.path,
    handler: (ctx, req, params) => {
      const state: StepState = { session: undefined }
      for (let i = 0; i < preamble.length; i++) preamble[i]!(ctx, req, state)
      const raw = isPost ? parseJsonBody(req) : NO_FIELDS
      const input = {
        body: body === undefined ? undefined : body(raw),
        path: path(params),
        query: readQuery === undefined ? NO_FIELDS : query(readQuery(req.query)),
        session: state.session,
        raw,
        req
      }
      return handler(ctx, input as never)
    }
  }
}

/** The router of a declaration: every declared route, in the declaration's order, served by its group's implementation. */
export const routerOf = <C, D extends Readonly<Record<string, Group>>>(declaration: D, implementations: Implementations<C, D>, steps: Steps<C>): Router<C> => {
  const router = new Router<C>()
  for (const [tag, group] of Object.entries(declaration)) {
    const impl = implementations[tag] as Readonly<Record<string, Handler<C, never>>> | undefined
    for (const [name, spec] of Object.entries(group)) {
      const handler = impl?.[name]
      if (handler === undefined) throw new Error(`${tag}.${name}: declared but not implemented`)
      router.add(serveRoute(spec, handler, steps, `${tag}.${name}`))
    }
  }
  return router
}

/** Types a group's implementation against its declaration (a missing, extra or mistyped handler does not compile). */
export const implement =
  <C>() =>
  <G extends Group>(_group: G, handlers: Implementation<C, G>): Implementation<C, G> =>
    handlers
