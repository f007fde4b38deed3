// Seeded randomness for the backtester. One seed string names every stream by label
// (`streams(seed).queue`), so adding draws to one model never shifts another's, and a
// run reproduces anywhere. Own copy rather than sim/random.ts so the backtester's hot
// loop stays monomorphic and independent of the simulator's evolving API.
import { createHash } from "node:crypto"

/** xoshiro128**: 32-bit integer math only, so every platform draws the same numbers. */
export class Rng {
  private s0: number
  private s1: number
  private s2: number
  private s3: number

  constructor(seed: string, label: string) {
    const d = createHash("sha256").update(seed).update("\u0000").update(label).digest()
    this.s0 = d.readUInt32LE(0)
    this.s1 = d.readUInt32LE(4)
    this.s2 = d.readUInt32LE(8)
    this.s3 = d.readUInt32LE(12)
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1 // xoshiro's one forbidden state
  }

  nextU32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9) >>> 0
    const t = this.s1 << 9
    this.s2 ^= this.s0
    this.s3 ^= this.s1
    this.s1 ^= this.s2
    this.s0 ^= this.s3
    this.s2 ^= t
    this.s3 = rotl(this.s3, 11)
    return result
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextU32() / 4294967296
  }

  /** Uniform integer in lo..hi inclusive. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1))
  }

  /** Exponential with the given mean (0 → 0). V8's Math.log is fdlibm: the same bits everywhere. */
  exponential(mean: number): number {
    return mean === 0 ? 0 : -Math.log(1 - this.next()) * mean
  }

  /** Standard normal (Box–Muller, one value per two draws). */
  normal(): number {
    const u = 1 - this.next()
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next())
  }
}

const rotl = (x: number, k: number): number => ((x << k) | (x >>> (32 - k))) >>> 0
