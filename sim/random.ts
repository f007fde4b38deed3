// Seeded randomness for the simulator. One root seed derives every component's
// stream by label (`fork("agents/7")`), so adding a component never shifts the
// draws of another, and a failing seed reproduces anywhere.
import { createHash } from "node:crypto"

/** sha256(parent, label) → the child's 128-bit state. */
const derive = (seed: string, label: string): Uint32Array => {
  const d = createHash("sha256").update(seed).update("\u0000").update(label).digest()
  const s = new Uint32Array([d.readUInt32LE(0), d.readUInt32LE(4), d.readUInt32LE(8), d.readUInt32LE(12)])
  if ((s[0]! | s[1]! | s[2]! | s[3]!) === 0) s[0] = 1 // xoshiro's one forbidden state
  return s
}

/** xoshiro128**: fast, 2^128 period, identical on every platform (32-bit integer math only). */
export class Rng {
  private readonly s: Uint32Array

  constructor(readonly seed: string) {
    this.s = derive(seed, "")
  }

  /** An independent stream for a named component. */
  fork(label: string): Rng {
    return new Rng(`${this.seed}/${label}`)
  }

  /** A uniform 32-bit unsigned integer. */
  nextU32(): number {
    const s = this.s
    const result = Math.imul(rotl(Math.imul(s[1]!, 5), 7), 9) >>> 0
    const t = s[1]! << 9
    s[2]! ^= s[0]!
    s[3]! ^= s[1]!
    s[1]! ^= s[2]!
    s[0]! ^= s[3]!
    s[2]! ^= t
    s[3] = rotl(s[3]!, 11)
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

  /** Exponential with the given mean: inter-arrival times of a Poisson process. */
  exponential(mean: number): number {
    return -Math.log(1 - this.next()) * mean
  }

  /** 32 bytes, e.g. a private key. */
  bytes32(label: string): Uint8Array {
    return new Uint8Array(createHash("sha256").update(this.seed).update("\u0000key\u0000").update(label).digest())
  }
}

const rotl = (x: number, k: number): number => ((x << k) | (x >>> (32 - k))) >>> 0
