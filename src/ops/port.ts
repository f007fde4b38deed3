// How the ops routes (src/api/routes/ops.ts) find their service's metrics and readiness: attached
// to the route context by the composition root (src/runtime/boot.ts), so the context's shape and
// the simulator (which attaches nothing) stay as they are.
import type { ServiceMetrics } from "./metrics.ts"
import type { ReadyReport } from "./readiness.ts"

export interface Ops {
  readonly metrics: ServiceMetrics
  /** METRICS_PUBLIC: /metrics without the operator token. */
  readonly metricsPublic: boolean
  ready(): Promise<ReadyReport>
}

const byCtx = new WeakMap<object, Ops>()

export const attachOps = (ctx: object, ops: Ops): void => void byCtx.set(ctx, ops)

export const opsOf = (ctx: object): Ops | undefined => byCtx.get(ctx)
