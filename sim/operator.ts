// The operator: admin requests straight into the running process's HTTP app (no
// simulated network between the operator and the service, so a fault schedule is
// applied exactly as written).
import type { HttpResponse } from "../src/api/http.ts"
import { ADMIN_TOKEN, type World } from "./world.ts"

export const OPERATOR_IP = "127.0.0.1"

export const adminCall = async (world: World, path: string, body: unknown): Promise<HttpResponse> => {
  const res = await world.core.app({
    method: "POST",
    path,
    query: new URLSearchParams(),
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    ip: OPERATOR_IP
  })
  if (res.status !== 200) throw new Error(`operator ${path} failed: ${res.status} ${res.body}`)
  return res
}
