// The `service_oracle_session` cookie: `<user>.<expiresAtSec>.<mac>`, where mac is
// HMAC-SHA256 under the server's secret, so a client cannot forge or extend it.
import { createHmac, timingSafeEqual } from "node:crypto"

export const SESSION_COOKIE = "service_oracle_session"
export const SESSION_LIFETIME_SEC = 7 * 24 * 3600

const mac = (secret: Uint8Array, payload: string): string =>
  createHmac("sha256", secret).update(payload).digest("base64url")

export const issueSessionCookie = (secret: Uint8Array, user: string, nowSec: number): string => {
  const payload = `${user}.${nowSec + SESSION_LIFETIME_SEC}`
  return `${payload}.${mac(secret, payload)}`
}

/** The `Set-Cookie` header value for a fresh session. */
export const sessionSetCookie = (value: string, secure: boolean): string =>
  `${SESSION_COOKIE}=${value}; Max-Age=${SESSION_LIFETIME_SEC}; Path=/; HttpOnly; SameSite=Lax${secure ? "; Secure" : ""}`

/**
 * Cookie values whose MAC has been checked, per secret: a client sends the same cookie with
 * every request, and the HMAC was ~6% of a signed order's main-thread time (twice: the route and
 * the request log). Only values that passed the MAC are kept, so the cache answers nothing a MAC
 * check would refuse; the expiry is checked at every use. Cleared whole when full.
 */
const verified = new WeakMap<Uint8Array, Map<string, { readonly user: string; readonly expiresAtSec: number }>>()
const VERIFIED_MAX = 100_000

/** The verified user of a session cookie value, or null when forged, malformed or expired. */
export const verifySessionCookie = (secret: Uint8Array, value: string, nowSec: number): string | null => {
  let known = verified.get(secret)
  if (known === undefined) verified.set(secret, (known = new Map()))
  const hit = known.get(value)
  if (hit !== undefined) return hit.expiresAtSec <= nowSec ? null : hit.user
  const checked = checkMac(secret, value)
  if (checked === null) return null
  if (known.size >= VERIFIED_MAX) known.clear()
  known.set(value, checked)
  return checked.expiresAtSec <= nowSec ? null : checked.user
}

/** The user and expiry of a well-formed cookie whose MAC is right, or null. */
const checkMac = (secret: Uint8Array, value: string): { user: string; expiresAtSec: number } | null => {
  const parts = value.split(".")
  if (parts.length !== 3) return null
  const [user, expires, given] = parts as [string, string, string]
  // Compare bytes, not characters: a non-ASCII character has the same length in
  // characters but not in bytes, and timingSafeEqual throws on unequal lengths.
  const givenBytes = Buffer.from(given, "utf8")
  const expectedBytes = Buffer.from(mac(secret, `${user}.${expires}`), "utf8")
  if (givenBytes.length !== expectedBytes.length || !timingSafeEqual(givenBytes, expectedBytes)) return null
  const expiresAtSec = Number(expires)
  if (!Number.isSafeInteger(expiresAtSec)) return null
  return { user, expiresAtSec }
}

/** Reads one cookie from a Cookie header. */
export const readCookie = (header: string | undefined, name: string): string | null => {
  if (header === undefined) return null
  for (const part of header.split(";")) {
    const eq = part.indexOf("=")
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return null
}
