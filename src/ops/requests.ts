// The request hook (src/ops/hooks.ts RequestObserver, called by src/api/app.ts): per request, one latency observe by
// method, route template and status, one log line, and for POST /v1/orders the placement's
// outcome. The user is the route's `user` (path or query) or, on a POST carrying a session
// cookie, the cookie's verified user; nothing else of the request is logged (never a header).
// The deposit service (its own port) is observed the same way into its own histogram family,
// its lines marked `service: "deposit"`.
import type { ObservedRequest, RequestDone, RequestObserver } from "./hooks.ts"
import { readCookie, SESSION_COOKIE, verifySessionCookie } from "../auth/session-cookie.ts"
import type { Logger } from "./log.ts"
import type { ServiceMetrics } from "./metrics.ts"

export interface RequestObserverOptions {
  readonly metrics: ServiceMetrics
  readonly logger: Logger
  readonly monoMs: () => number
  /** The wall clock and the session secret: a cookie's user is logged only once verified. */
  readonly nowMs: () => number
  readonly secret: Uint8Array
  /** Which server: "api" (the default) or "deposit". */
  readonly service?: "api" | "deposit"
}

/** Probes and scrapes: logged at debug, so a 5 s readiness probe does not fill the log. */
const QUIET = new Set(["/metrics", "/v1/health", "/v1/ready"])

const userOf = (o: RequestObserverOptions, req: ObservedRequest, r: RequestDone): string | undefined => {
  const fromRoute = r.params.user ?? req.query.get("user") ?? undefined
  if (fromRoute !== undefined || req.method !== "POST") return fromRoute
  const cookie = readCookie(req.headers.cookie, SESSION_COOKIE)
  return cookie === null ? undefined : (verifySessionCookie(o.secret, cookie, Math.floor(o.nowMs() / 1000)) ?? undefined) // live-only: the cookie's signed expiry against the wall clock, as the routes check it
}

export const requestObserver = (o: RequestObserverOptions): RequestObserver => {
  const deposit = o.service === "deposit"
  const histogram = deposit ? o.metrics.depositHttpDuration : o.metrics.httpDuration
  return {
    monoMs: o.monoMs,
    done: (req, r) => {
      histogram.observe({ method: req.method, route: r.route, status: r.status }, r.durationMs / 1000)
      if (!deposit && r.route === "/v1/orders" && req.method === "POST") {
        const result = r.status === 200 ? "accepted" : r.status === 202 ? "queued" : "rejected"
        o.metrics.orders.inc({ result, reason: r.errorCode ?? "none" })
      }
      // A probe's 503 (not ready) is debug too: readiness logs its own change once (loggedReadiness);
      // only a probe's unexpected 500 is an error line.
      const level = QUIET.has(r.route) && r.status !== 500 ? "debug" : r.status >= 500 ? "error" : "info"
      if (!o.logger.enabled(level)) return
      o.logger[level]("request", {
        ...(deposit ? { service: "deposit" } : {}),
        method: req.method,
        route: r.route,
        status: r.status,
        duration_ms: Math.round(r.durationMs * 1000) / 1000,
        user: userOf(o, req, r),
        error_code: r.errorCode ?? undefined
      })
    }
  }
}
