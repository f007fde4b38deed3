// The session cookie's check (src/auth/session-cookie.ts) with its cache of values whose MAC
// was checked: the cache never answers what the MAC check would refuse. A tampered value, a
// value for another secret, and a value past its expiry are refused whether or not the genuine
// value was seen before.
import { describe, expect, it } from "vitest"
import { issueSessionCookie, SESSION_LIFETIME_SEC, verifySessionCookie } from "../../src/auth/session-cookie.ts"

const secret = new Uint8Array(32).fill(7)
const other = new Uint8Array(32).fill(8)
const NOW = 1_767_225_600

describe("session cookie check", () => {
  it("refuses forged, foreign and expired values, before and after the genuine one is known", () => {
    const good = issueSessionCookie(secret, "alice", NOW)
    const [user, expires, mac] = good.split(".") as [string, string, string]
    const forged = [
      `${user}.${Number(expires) + 3600}.${mac}`, // extended
      `mallory.${expires}.${mac}`, // another user
      `${user}.${expires}.${mac.slice(0, -1)}${mac.endsWith("A") ? "B" : "A"}`, // MAC changed
      `${user}.${expires}`,
      `${user}.${expires}.${mac}.x`
    ]
    for (const round of ["before", "after"]) {
      for (const f of forged) expect(verifySessionCookie(secret, f, NOW), `${round}: ${f}`).toBeNull()
      expect(verifySessionCookie(other, good, NOW), `${round}: other secret`).toBeNull()
      expect(verifySessionCookie(secret, good, NOW + SESSION_LIFETIME_SEC), `${round}: expired`).toBeNull()
      expect(verifySessionCookie(secret, good, NOW + 60), round).toBe("alice")
    }
    // Known and then expired: the cached value is refused at its expiry like a fresh one.
    expect(verifySessionCookie(secret, good, NOW + SESSION_LIFETIME_SEC - 1)).toBe("alice")
    expect(verifySessionCookie(secret, good, NOW + SESSION_LIFETIME_SEC)).toBeNull()
    // A value first seen expired is still known good for its MAC, and still refused.
    const old = issueSessionCookie(secret, "bob", NOW - 2 * SESSION_LIFETIME_SEC)
    expect(verifySessionCookie(secret, old, NOW)).toBeNull()
    expect(verifySessionCookie(secret, old, NOW)).toBeNull()
  })
})
