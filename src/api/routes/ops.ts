// The ops group (docs/metrics.md): liveness, readiness and the Prometheus scrape, declared in
// src/api/declaration/ops.ts. /metrics needs the operator token unless the
// operator made it public (METRICS_PUBLIC=true; docs/decisions.md § Metrics).
import { type AppCtx, requireAdmin } from "../context.ts"
import { API } from "../declaration/api.ts"
import { json } from "../http.ts"
import { implement } from "../serve.ts"
import { ApiError, errorBody } from "../../domain/errors.ts"
import { opsOf } from "../../ops/port.ts"
import { failedChecks, type ReadyReport } from "../../ops/readiness.ts"

/** A service without ops attached (bare test contexts): nothing to check beyond answering. */
const BARE: ReadyReport = {
  status: "ready",
  checks: {
    journal: { ok: true, detail: "not checked (no ops attached)" },
    history: { ok: true, detail: "not checked (no ops attached)" },
    chain: { ok: true, detail: "not checked (no ops attached)" },
    deposit_service: { ok: true, detail: "not checked (no ops attached)" }
  }
}

const NO_STORE = { "cache-control": "no-store" }

export const ops = implement<AppCtx>()(API.ops, {
  // `ok` and `seq` were its body before; kept beside `status` for the clients that read them.
  health: (ctx) => json(200, { status: "ok", ok: true, seq: ctx.exchange.lastSeq }, NO_STORE),
  ready: async (ctx) => {
    const report = (await opsOf(ctx)?.ready()) ?? BARE
    if (report.status === "ready") return json(200, report, NO_STORE)
    return json(503, errorBody("not_ready", failedChecks(report), { ...report }), NO_STORE)
  },
  metrics: async (ctx, { req }) => {
    const ops = opsOf(ctx)
    if (ops === undefined) throw new ApiError("not_found", "metrics are not collected in this process")
    // The operator token unless the operator made the scrape public: conditional, so not the preamble's "admin".
    if (!ops.metricsPublic) requireAdmin(ctx, req)
    const registry = ops.metrics.registry
    return { status: 200, headers: { "content-type": registry.contentType, ...NO_STORE }, body: await registry.metrics() }
  }
})
