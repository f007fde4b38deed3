// Query-parameter parsing with clear 400s.
import { ApiError } from "../../domain/errors.ts"

/** An integer query parameter in [min, max], the fallback when absent, 400 invalid_query when malformed. */
export const intParam = <F extends number | null>(q: URLSearchParams, name: string, fallback: F, min: number, max: number): number | F => {
  const raw = q.get(name)
  if (raw === null || raw === "") return fallback
  if (!/^-?\d+$/.test(raw)) throw new ApiError("invalid_query", `${name}: expected an integer`)
  const n = Number(raw)
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new ApiError("invalid_query", `${name}: must be between ${min} and ${max}`)
  return n
}

/** The shared per-user list envelope's paging: limit default 50, at most 200; offset from 0. */
export const pageParams = (q: URLSearchParams): { limit: number; offset: number } => ({
  limit: Math.min(200, intParam(q, "limit", 50, 1, Number.MAX_SAFE_INTEGER)),
  offset: intParam(q, "offset", 0, 0, Number.MAX_SAFE_INTEGER)
})
