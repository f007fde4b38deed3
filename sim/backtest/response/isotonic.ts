// Monotone Poisson rates by pool-adjacent-violators: counts n_k over exposures E_k, in order of
// the covariate, fitted by the non-decreasing rates λ_k that maximise the Poisson likelihood
// Σ n_k·log λ_k − λ_k·E_k. That maximum is the weighted isotonic regression of n_k ÷ E_k with
// weights E_k: adjacent cells that violate the order are pooled (Σn ÷ ΣE) until none does.
// So noise never makes a better quote attract fewer takers.

export interface RateCell {
  readonly exposureSec: number
  readonly count: number
}

/** The non-decreasing maximum-likelihood rate per cell (per second); cells need exposure > 0. */
export const isotonicRates = (cells: ReadonlyArray<RateCell>): number[] => {
  // Blocks of pooled cells: their count, exposure and how many cells they hold.
  const n: number[] = []
  const e: number[] = []
  const len: number[] = []
  for (const c of cells) {
    n.push(c.count)
    e.push(c.exposureSec)
    len.push(1)
    // Pool while the last block's rate is below the one before it (cross-multiplied: exact for integers).
    while (n.length > 1 && n[n.length - 1]! * e[e.length - 2]! < n[n.length - 2]! * e[e.length - 1]!) {
      const cn = n.pop()!
      const ce = e.pop()!
      const cl = len.pop()!
      n[n.length - 1]! += cn
      e[e.length - 1]! += ce
      len[len.length - 1]! += cl
    }
  }
  const out: number[] = []
  for (let b = 0; b < n.length; b++) for (let k = 0; k < len[b]!; k++) out.push(n[b]! / e[b]!)
  return out
}
