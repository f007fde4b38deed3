// The key a per-address limit counts a client under (docs/api.md "Limits"). One IPv4 address is
// one client; an IPv6 host is usually handed a whole /64 (SLAAC, privacy addresses), so its
// addresses cost nothing to change and are grouped by their /64. A dual-stack listener sees
// IPv4 clients as IPv4-mapped addresses (`::ffff:a.b.c.d`); those are the IPv4 address, not one
// /64 shared by every IPv4 client. Used by the rate limiter's per-address buckets; the feed's
// per-address connection count should use it too.

/** The IPv6 prefix length grouped into one key. */
export const IPV6_PREFIX_BITS = 64

const COLON = 58
const DOT = 46

/** The value of a hex digit's char code, or -1. */
const hexDigit = (c: number): number => (c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1)

/** `a.b.c.d` (each part 0..255, 1–3 digits) in `s[from, end)` as a 32-bit number, or -1. */
const ipv4At = (s: string, from: number, end: number): number => {
  let value = 0
  let parts = 0
  let i = from
  while (parts < 4) {
    let part = 0
    let digits = 0
    while (i < end && digits < 4) {
      const c = s.charCodeAt(i)
      if (c < 48 || c > 57) break
      part = part * 10 + (c - 48)
      digits++
      i++
    }
    if (digits === 0 || digits > 3 || part > 255) return -1
    value = value * 256 + part
    parts++
    if (parts < 4) {
      if (i >= end || s.charCodeAt(i) !== DOT) return -1
      i++
    }
  }
  return i === end ? value : -1
}

/**
 * The eight hextets of an IPv6 address in any textual form (`::` anywhere, upper or lower case,
 * leading zeros, a dotted IPv4 tail; a zone id `%…` dropped), or null. One pass over the
 * characters: a flood of fresh IPv6 addresses is what this serves, so no regex or splitting.
 */
export const parseIpv6 = (address: string): number[] | null => {
  const zone = address.indexOf("%")
  const end = zone < 0 ? address.length : zone
  const groups: number[] = []
  /** Where `::` stands among the groups, or -1. */
  let gap = -1
  let i = 0
  if (address.charCodeAt(0) === COLON) {
    if (address.charCodeAt(1) !== COLON) return null
    gap = 0
    i = 2
  }
  while (i < end) {
    let value = 0
    let j = i
    for (let v = hexDigit(address.charCodeAt(j)); j < end && v >= 0; v = hexDigit(address.charCodeAt(++j))) value = value * 16 + v
    if (j < end && address.charCodeAt(j) === DOT) {
      // A dotted IPv4 tail: the last two hextets.
      const v4 = ipv4At(address, i, end)
      if (v4 < 0 || groups.length > 6) return null
      groups.push(Math.floor(v4 / 65536), v4 % 65536)
      break
    }
    if (j === i || j - i > 4 || groups.length === 8) return null
    groups.push(value)
    if (j === end) break
    if (address.charCodeAt(j) !== COLON) return null
    i = j + 1
    if (address.charCodeAt(i) === COLON) {
      if (gap >= 0) return null
      gap = groups.length
      i++
    } else if (i === end) return null
  }
  if (gap < 0) return groups.length === 8 ? groups : null
  if (groups.length > 7) return null
  groups.splice(gap, 0, ...new Array<number>(8 - groups.length).fill(0))
  return groups
}

/**
 * The per-address key of a peer address: an IPv4 address as it is, an IPv4-mapped IPv6 address
 * as its IPv4 address, any other IPv6 address as its /64 (`2001:db8:0:1::/64`), and anything
 * else (`unknown`, a simulator's label) unchanged.
 */
export const addressKey = (ip: string): string => {
  if (!ip.includes(":")) return ip
  const h = parseIpv6(ip)
  if (h === null) return ip
  if (h[0] === 0 && h[1] === 0 && h[2] === 0 && h[3] === 0 && h[4] === 0 && h[5] === 0xffff) {
    return `${h[6]! >> 8}.${h[6]! & 0xff}.${h[7]! >> 8}.${h[7]! & 0xff}`
  }
  return `${h.slice(0, IPV6_PREFIX_BITS / 16).map((x) => x.toString(16)).join(":")}::/${IPV6_PREFIX_BITS}`
}
