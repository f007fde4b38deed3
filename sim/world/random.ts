// Seeded randomness for the simulator. One root seed derives every component's
// stream by label (`fork("agents/7")`), so adding a component never shifts the
// draws of another, and a failing seed reproduces anywhere.
import { createHash } from "node:crypto"

/**
 * xoshiro128**: fast, 2^128 period, identical on every platform (32-bit integer math only).
 * The state is sha256(seed, label); plain fields keep the backtester's hot loop monomorphic.
 */
export class Rng {
  private s0: number
  private s1: number
  private s2: number
  private s3: number

  constructor(
    readonly seed: string,
    label = ""
  ) {
    const d = createHash("sha256").update(seed).update("\u0000").update(label).digest()
    this.s0 = d.readUInt32LE(0)
    this.s1 = d.readUInt32LE(4)
    this.s2 = d.readUInt32LE(8)
    this.s3 = d.readUInt32LE(12)
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1 // xoshiro's one forbidden state
  }

  /** An independent stream for a named component. */
  fork(label: string): Rng {
    return new Rng(`${this.seed}/${label}`)
  }

  /** A uniform 32-bit unsigned integer. */
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

  /** Uniform integer in [lo, hi] (inclusive). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1))
  }

  chance(probability: number): boolean {
    return this.next() < probability
  }

  pick<T>(items: ReadonlyArray<T>): T {
    if (items.length === 0) throw new RangeError("pick from an empty list")
    return items[Math.floor(this.next() * items.length)]!
  }

  /** Standard normal (Box–Muller; the second value is discarded to keep the stream simple). */
  normal(): number {
    const u = 1 - this.next()
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next())
  }

  /** Exponential with the given mean (0 → 0): inter-arrival times of a Poisson process. V8's Math.log is fdlibm: the same bits everywhere. */
  exponential(mean: number): number {
    return mean === 0 ? 0 : -Math.log(1 - this.next()) * mean
  }

  /** 32 bytes, e.g. a private key. */
  bytes32(label: string): Uint8Array {
    return new Uint8Array(createHash("sha256").update(this.seed).update("\u0000key\u0000").update(label).digest())
  }
}

const rotl = (x: number, k: number): number => ((x << k) | (x >>> (32 - k))) >>> 0
