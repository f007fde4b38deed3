// CORS is decided by the request's Origin against an allow-list, never by Host.
import { errorBody } from "../domain/errors.ts"
import type { HttpRequest, HttpResponse } from "./http.ts"

export const corsHeaders = (req: HttpRequest, allowed: ReadonlySet<string>): Record<string, string> => {
  const origin = req.headers.origin
  // Vary on every response, allowed or not: an edge cache must not serve one origin's answer to another.
  if (origin === undefined || !allowed.has(origin)) return { vary: "Origin" }
  return {
    "access-control-allow-origin": origin,
    "access-control-allow-credentials": "true",
    // A cluster gateway's read-your-writes mark (docs/cluster.md), readable by browser clients.
    "access-control-expose-headers": "x-twinbook-seq",
    vary: "Origin"
  }
}

/** Answers a preflight: 204 with the allowances for a listed origin, 403 otherwise. */
export const preflight = (req: HttpRequest, allowed: ReadonlySet<string>): HttpResponse => {
  const headers = corsHeaders(req, allowed)
  if (headers["access-control-allow-origin"] === undefined) {
    return { status: 403, headers: { "content-type": "application/json; charset=utf-8", vary: "Origin" }, body: JSON.stringify(errorBody("forbidden_origin")) }
  }
  return {
    status: 204,
    headers: {
      ...headers,
      "access-control-allow-methods": "GET, POST, OPTIONS",
      "access-control-allow-headers": "content-type, authorization, x-twinbook-min-seq",
      "access-control-max-age": "600"
    },
    body: ""
  }
}
