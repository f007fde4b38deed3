// The operations routes (docs/metrics.md; served by src/api/routes/ops.ts): liveness, readiness
// and the Prometheus scrape. Extensions beside SPEC.md; api.ts adds the group with one line.
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { Schema } from "effect"
import type { Group } from "./endpoint.ts"
import { API_TABLE as T } from "./table.ts"
import { ADMIN } from "./operator.ts"

export const Health = Schema.Struct({
  status: Schema.Literal("ok"),
  ok: Schema.Literal(true),
  seq: Schema.Int.annotations({ description: "the newest journal record applied" })
}).annotations({ identifier: "Health" })

const Check = Schema.Struct({ ok: Schema.Boolean, detail: Schema.String }).annotations({ identifier: "ReadyCheck" })
const Checks = Schema.Struct({
  journal: Check.annotations({ description: "the journal has not failed, what was appended before the probe is durable, DATA_DIR takes new files and has room; the detail names a slow disk" }),
  history: Check.annotations({ description: "extension: the history store's last write succeeded" }),
  chain: Check.annotations({ description: "the RPC answers, the chain guard has not halted, the deposit watcher is at most READY_MAX_LAG_BLOCKS behind" }),
  deposit_service: Check.annotations({ description: "the deposit service is listening" })
})

export const Ready = Schema.Struct({ status: Schema.Literal("ready"), checks: Checks }).annotations({ identifier: "Ready" })
/** The error envelope (only `error` required, like every error answer) with the whole report beside it; all four are always sent. */
export const NotReady = Schema.Struct({
  error: Schema.Literal("not_ready"),
  detail: Schema.optionalWith(Schema.String.annotations({ description: "the failed checks, `name: why`, joined by `; `" }), { exact: true }),
  status: Schema.optionalWith(Schema.Literal("not_ready"), { exact: true }),
  checks: Schema.optionalWith(Checks, { exact: true })
}).annotations({ identifier: "NotReady" })

/** Prometheus text exposition format 0.0.4. */
const PrometheusText = HttpApiSchema.Text({ contentType: "text/plain" }).annotations({ description: "Prometheus text format (version 0.0.4)" })

/** Groups by tag, spread into API (src/api/declaration/api.ts). */
export const OPS_ROUTES = {
  ops: {
    health: { ...T.ops.health, summary: "Liveness: 200 while the process answers", success: Health, errors: [], alwaysServed: true },
    ready: {
      ...T.ops.ready,
      summary: "Readiness: 200 when the journal is writable, the chain reachable and followed, the deposit service up; 503 naming what failed",
      success: { 200: Ready, 503: NotReady },
      errors: [],
      alwaysServed: true
    },
    // The token is checked by the handler: METRICS_PUBLIC=true lifts it (docs/decisions.md § Metrics).
    metrics: {
      ...T.ops.metrics,
      summary: "Prometheus metrics (docs/metrics.md); the operator token unless METRICS_PUBLIC=true",
      auth: "admin",
      success: PrometheusText,
      errors: [...ADMIN, "not_found"],
      alwaysServed: true
    }
  }
} as const satisfies Readonly<Record<string, Group>>
