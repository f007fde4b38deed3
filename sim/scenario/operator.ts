// The operator: admin requests straight into the running process's HTTP app (no
// simulated network between the operator and the service, so a fault schedule is
// applied exactly as written).
import type { HttpResponse } from "../../src/api/http.ts"
import { ADMIN_TOKEN, type World } from "../world/world.ts"

export const OPERATOR_IP = "127.0.0.1"

/** One operator request; throws unless it answers 200. */
export const adminCall = async (world: World, path: string, body: unknown): Promise<HttpResponse> => {
  const res = await adminRequest(world, path, body)
  if (res.status !== 200) throw new Error(`operator ${path} failed: ${res.status} ${res.body}`)
  return res
}

/**
 * Setup-time operator request (outside the scheduler's run): honours the operator rate
 * limit by moving virtual time on, as a script pacing itself would.
 */
export const adminSetupCall = async (world: World, path: string, body: unknown): Promise<HttpResponse> => {
  for (;;) {
    const res = await settled(world, adminRequest(world, path, body))
    if (res.status !== 429) {
      if (res.status !== 200) throw new Error(`operator ${path} failed: ${res.status} ${res.body}`)
      return res
    }
    await world.scheduler.run(world.scheduler.nowMs() + Number(JSON.parse(res.body).retry_after ?? 1) * 1000)
  }
}

/**
 * On the simulated disk (or the cluster's replicated log) a request is answered only once its
 * journal batch is durable, which takes scheduler events: outside the run, move virtual time on
 * (1 ms at a time) until it is.
 */
const settled = async <A>(world: World, pending: Promise<A>): Promise<A> => {
  if (world.host === null && world.cluster === null) return pending
  let done = false
  const out = pending.finally(() => void (done = true))
  while (!done) await world.scheduler.run(world.scheduler.nowMs() + 1)
  return out
}

const adminRequest = (world: World, path: string, body: unknown): Promise<HttpResponse> =>
  world.core.app({
    method: "POST",
    path,
    query: new URLSearchParams(),
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    ip: OPERATOR_IP
  })
