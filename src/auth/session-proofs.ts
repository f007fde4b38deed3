// Session proofs are single-use (issue 31, item 11; docs/decisions.md "Session proofs are
// single-use"). SPEC §5 signs one message, `Service Session / User: <user> / Timestamp: <ts>`,
// both to register (a 7-day session cookie) and to open the `user:` channel, and a proof stays
// fresh for a while: seen once, it could be sent again — on the other route or the same one —
// until its timestamp went stale. Every route that accepts such a proof claims (user, timestamp)
// here after the signature verified; a pair already claimed is refused on both routes.
//
// Memory: a pair is kept until no route would accept its timestamp (the longer window), in one
// bucket per timestamp, so expiry drops whole buckets. At most `maxKept` pairs are kept: past it
// the oldest bucket is dropped and its timestamp becomes the floor — every timestamp at or below
// the floor is refused — so a forgotten proof is never accepted again (a flood can make fresh
// proofs with old timestamps fail; it can never reopen a replay).

/** `POST /v1/builders/register`: a timestamp more than this from the server's clock is stale (SPEC §5.1). */
export const REGISTER_SKEW_SEC = 60
/** The `user:` channel's proof window (SPEC §5.6, §8: 5 minutes). */
export const USER_PROOF_WINDOW_SEC = 300
/** A claimed pair is kept while any route would still accept its timestamp. */
export const PROOF_KEEP_SEC = Math.max(REGISTER_SKEW_SEC, USER_PROOF_WINDOW_SEC)
/** Pairs kept at most (about 130 bytes each, ~25 MB); reaching it takes that many verified signatures within 10 minutes. */
export const MAX_PROOFS_KEPT = 200_000

export class SessionProofs {
  /** Timestamp → the users whose proof with that timestamp was accepted. */
  private readonly byTimestamp = new Map<number, Set<string>>()
  private kept = 0
  /** Every timestamp at or below it is refused: the newest bucket dropped so far. */
  private floorSec = Number.NEGATIVE_INFINITY
  private prunedAtSec = Number.NaN
  /** Pairs dropped to stay under `maxKept` (counts only; read by tests and /metrics). */
  evicted = 0

  constructor(
    /** The wall clock, in seconds: the one the routes check signed timestamps against. */
    private readonly wallSec: () => number,
    private readonly maxKept: number = MAX_PROOFS_KEPT
  ) {
    if (!(maxKept >= 1)) throw new RangeError("SessionProofs keeps at least one pair")
  }

  /** Pairs kept now. */
  get size(): number {
    return this.kept
  }

  /** True the first time (user, timestamp) is claimed; false for every later claim of it. */
  claim(user: string, timestampSec: number): boolean {
    this.prune()
    if (timestampSec <= this.floorSec) return false
    let users = this.byTimestamp.get(timestampSec)
    if (users?.has(user)) return false
    while (this.kept >= this.maxKept && this.kept > 0) this.dropOldest()
    // The bucket dropped may have been this timestamp's own.
    if (timestampSec <= this.floorSec) return false
    users = this.byTimestamp.get(timestampSec)
    if (users === undefined) this.byTimestamp.set(timestampSec, (users = new Set()))
    users.add(user)
    this.kept++
    return true
  }

  /** Drops the buckets no route would accept any more; once per second of the clock. */
  private prune(): void {
    const now = this.wallSec()
    if (now === this.prunedAtSec) return
    this.prunedAtSec = now
    for (const [ts, users] of this.byTimestamp) if (now - ts > PROOF_KEEP_SEC) this.drop(ts, users)
  }

  private dropOldest(): void {
    let oldest = Number.POSITIVE_INFINITY
    for (const ts of this.byTimestamp.keys()) if (ts < oldest) oldest = ts
    const users = this.byTimestamp.get(oldest)!
    this.evicted += users.size
    this.drop(oldest, users)
  }

  /** Forgets a bucket; its timestamp raises the floor, so a clock stepped back cannot make it acceptable again. */
  private drop(ts: number, users: Set<string>): void {
    this.byTimestamp.delete(ts)
    this.kept -= users.size
    if (ts > this.floorSec) this.floorSec = ts
  }
}
