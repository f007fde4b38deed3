// Type-level readers of the API declaration for src/client/types.ts: a route's request body
// and query as the client sends them. Type-only (nothing of Effect reaches the bundle); the
// client package's declarations replace each use by the plain type it resolves to
// (scripts/client-declarations.ts), so this file is not shipped.
import type { Schema } from "effect"
import type { API, DEPOSIT } from "../api/declaration/api.ts"

export type Api = typeof API
export type DepositDeclaration = typeof DEPOSIT

/** The body a route's declaration accepts, as sent (its schema's encoded side). */
export type RequestOf<R> = R extends { readonly body: infer S extends Schema.Schema.Any } ? Schema.Schema.Encoded<S> : never

/** A route's query as the client gives it: the declared values, the `true`/`false` flags as booleans. */
export type QueryOf<R> = R extends { readonly query: infer F extends Schema.Struct.Fields }
  ? { readonly [K in keyof Schema.Struct.Type<F>]?: Exclude<Schema.Struct.Type<F>[K], undefined> extends "true" | "false" ? boolean : Exclude<Schema.Struct.Type<F>[K], undefined> }
  : never
