// Queue position models, named as hftbacktest names them. Our orders sit in the engine's
// real FIFO, so trades always consume the queue ahead of us first (price-time priority).
// What no data says is *where* a background cancel at our level came from; the model
// decides whether it shrinks the queue ahead of us or behind us:
//
//   risk-averse (RiskAverseQueueModel): always behind us; we advance only when trades
//     consume the queue ahead (or when the level holds less than our queue ahead).
//   prob (ProbQueueModel, power function): ahead of us with probability
//     f(front) / (f(front) + f(back)), f(x) = x^n: certain when nobody is behind us, never
//     when nobody is ahead, and weighted towards the longer side in between.
import type { QueueModelName } from "./config.ts"
import type { Rng } from "../world/random.ts"

export interface QueueModel {
  readonly name: QueueModelName
  /** Should a background decrease at our level come off the queue ahead of us first? */
  aheadFirst(frontContracts: number, backContracts: number): boolean
}

export const riskAverseQueue: QueueModel = { name: "risk-averse", aheadFirst: () => false }

/** x^n by repeated multiplication: exact-ish and identical everywhere for small integer n. */
const power = (x: number, n: number): number => {
  let r = 1
  for (let i = 0; i < n; i++) r *= x
  return r
}

export const probQueue = (n: number, rng: Rng): QueueModel => ({
  name: "prob",
  aheadFirst: (front, back) => {
    if (front <= 0) return false
    if (back <= 0) return true
    const f = power(front, n)
    return rng.next() < f / (f + power(back, n))
  }
})

export const queueModel = (name: QueueModelName, n: number, rng: Rng): QueueModel => (name === "prob" ? probQueue(n, rng) : riskAverseQueue)
