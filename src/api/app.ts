// The HTTP app: one function from request to response, used by the node:http
// adapter live and called directly by the simulator. Errors map to the
// envelope here and nowhere else; nothing answers with HTML or a stack trace.
import { ApiError, errorBody } from "../domain/errors.ts"
import type { OnError, RequestObserver } from "../ops/hooks.ts"
import type { AppCtx } from "./context.ts"
import { corsHeaders, preflight } from "./cors.ts"
import { API } from "./declaration/api.ts"
import { errorResponse, type HttpRequest, type HttpResponse, isJsonContentType, json, type Router } from "./http.ts"
import { account } from "./routes/account.ts"
import { operator } from "./routes/admin.ts"
import { dev, nonces } from "./routes/dev.ts"
import { fees } from "./routes/fees.ts"
import { lpBot } from "./routes/lp-bot.ts"
import { markets } from "./routes/markets.ts"
import { feed, meta } from "./routes/meta.ts"
import { ops } from "./routes/ops.ts"
import { orders } from "./routes/orders.ts"
import { session } from "./routes/session.ts"
import { wallet } from "./routes/wallet.ts"
import { routerOf } from "./serve.ts"
import { API_STEPS } from "./steps.ts"

export type App = (req: HttpRequest) => Promise<HttpResponse>

/** The API's router: the declaration (src/api/declaration/api.ts), each group implemented by its routes file. */
export const makeRouter = (): Router<AppCtx> =>
  routerOf(API, { session, orders, markets, account, wallet, fees, "lp-bot": lpBot, feed, operator, meta, dev, nonces, ops }, API_STEPS)

// The HTTP hooks' types live with ops (src/ops/hooks.ts), which implements them: ops never imports api.
export type { ErrorContext, OnError, RequestDone, RequestObserver } from "../ops/hooks.ts"

/**
 * Serves a router as an App: CORS preflight and headers from the Origin allow-list,
 * JSON 404/405 (with Allow), 415 for a POST that is not `application/json` (a
 * cross-site "simple request" cannot carry that type without a preflight), errors
 * mapped to the envelope once, HEAD without a body. Shared by the API and the
 * deposit service.
 */
export const serveRouter = <C>(
  router: Router<C>,
  ctx: C,
  corsOrigins: ReadonlySet<string>,
  onError: OnError,
  observe?: RequestObserver,
  /** Refuses a matched route before its handler runs (cluster mode: a sequencer that does not lead). */
  gate?: (route: string) => ApiError | null
): App => {
  // A counter, not randomness: the simulator runs this app too and must stay deterministic.
  let requests = 0
  const NO_PARAMS: Readonly<Record<string, string>> = {}
  return async (req) => {
    const t0 = observe?.monoMs() ?? 0
    if (req.method === "OPTIONS") {
      const out = preflight(req, corsOrigins)
      observe?.done(req, { route: "(preflight)", params: NO_PARAMS, status: out.status, errorCode: null, durationMs: observe.monoMs() - t0 })
      return out
    }
    let res: HttpResponse
    let route = "(none)"
    let params = NO_PARAMS
    let errorCode: string | null = null
    try {
      const found = router.match(req.method, req.path)
      if (found === null) throw new ApiError("not_found", `no route ${req.method} ${req.path}`)
      if (found === "method_not_allowed") {
        errorCode = "method_not_allowed"
        res = errorResponse(new ApiError("method_not_allowed", `${req.method} is not allowed on ${req.path}`))
        res.headers.allow = router.methodsFor(req.path).join(", ")
      } else {
        route = found.route.path
        params = found.params
        const refusal = gate?.(route) ?? null
        if (refusal !== null) throw refusal
        if (found.route.method === "POST" && !isJsonContentType(req.headers["content-type"])) {
          throw new ApiError("unsupported_media_type", "POST bodies must be sent with Content-Type: application/json")
        }
        res = await found.route.handler(ctx, req, found.params)
      }
    } catch (err) {
      if (err instanceof ApiError) {
        errorCode = err.code
        res = errorResponse(err)
      } else {
        errorCode = "internal_error"
        const requestId = `r${++requests}`
        onError(err, { requestId, method: req.method, route })
        res = json(500, errorBody("internal_error", `unexpected server error (request ${requestId})`), { "x-request-id": requestId })
      }
    }
    const cors = corsHeaders(req, corsOrigins)
    for (const k in cors) res.headers[k] = cors[k]!
    if (req.method === "HEAD") {
      res.headers["content-length"] = String(Buffer.byteLength(res.body))
      res.body = ""
    }
    observe?.done(req, { route, params, status: res.status, errorCode, durationMs: observe.monoMs() - t0 })
    return res
  }
}

export const makeApp = (ctx: AppCtx, onError: OnError = () => {}, observe?: RequestObserver): App =>
  serveRouter(makeRouter(), ctx, ctx.config.corsOrigins, onError, observe, ctx.gate)
