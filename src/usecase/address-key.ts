// The key a per-address limit counts a client under (docs/api.md "Limits"). One IPv4 address is
// one client; an IPv6 host is usually handed a whole /64 (SLAAC, privacy addresses), so its
// addresses cost nothing to change and are grouped by their /64. A dual-stack listener sees
// IPv4 clients as IPv4-mapped addresses (`::ffff:a.b.c.d`); those are the IPv4 address, not one
// /64 shared by every IPv4 client. Used by the rate limiter's per-address buckets; the feed's
// per-address connection count should use it too.

/** The IPv6 prefix length grouped into one key. */
export const IPV6_PREFIX_BITS = 64

/** `a.b.c.d` with each part 0..255, or null. */
const ipv4Parts = (s: string): number[] | null => {
  const parts = s.split(".")
  if (parts.length !== 4) return null
  const out: number[] = []
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return null
    out.push(Number(p))
  }
  return out
}

/** Hextets of one side of `::` (a trailing dotted IPv4 counts as two), or null. */
const hextets = (side: string, lastSide: boolean): number[] | null => {
  if (side === "") return []
  const groups = side.split(":")
  const out: number[] = []
  for (let i = 0; i < groups.length; i++) {
    const g = groups[i]!
    if (lastSide && i === groups.length - 1 && g.includes(".")) {
      const v4 = ipv4Parts(g)
      if (v4 === null) return null
      out.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!)
    } else if (/^[0-9a-fA-F]{1,4}$/.test(g)) out.push(parseInt(g, 16))
    else return null
  }
  return out
}

/** The eight hextets of an IPv6 address (any textual form, zone id dropped), or null. */
export const parseIpv6 = (address: string): number[] | null => {
  const s = address.split("%")[0]!
  const halves = s.split("::")
  if (halves.length > 2) return null
  const head = hextets(halves[0]!, halves.length === 1)
  const tail = halves.length === 2 ? hextets(halves[1]!, true) : []
  if (head === null || tail === null) return null
  if (halves.length === 1) return head.length === 8 ? head : null
  const zeros = 8 - head.length - tail.length
  return zeros < 1 ? null : [...head, ...new Array<number>(zeros).fill(0), ...tail]
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
