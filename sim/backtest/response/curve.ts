// Poisson regression of taker arrivals on the spread: counts n_s over exposure E_s seconds at
// spread s ticks, n_s ~ Poisson(E_s · a · exp(−b·s)). The exact likelihood for a touch that is
// piecewise constant in time, maximised by Newton's method on (log a, b) (it is concave there).
import type { ArrivalCurve } from "./model.ts"

export interface Cell {
  readonly ticks: number
  readonly exposureSec: number
  readonly count: number
}

const negLogLik = (cells: ReadonlyArray<Cell>, alpha: number, b: number): number =>
  cells.reduce((f, c) => f + c.exposureSec * Math.exp(alpha - b * c.ticks) - c.count * (alpha - b * c.ticks), 0)

/** Gradient and Hessian of the negative log-likelihood in (alpha = log a, b). */
const derivatives = (cells: ReadonlyArray<Cell>, alpha: number, b: number): { ga: number; gb: number; haa: number; hab: number; hbb: number } => {
  let ga = 0, gb = 0, haa = 0, hab = 0, hbb = 0
  for (const c of cells) {
    const mu = c.exposureSec * Math.exp(alpha - b * c.ticks)
    ga += mu - c.count
    gb += c.count * c.ticks - c.ticks * mu
    haa += mu
    hab -= c.ticks * mu
    hbb += c.ticks * c.ticks * mu
  }
  return { ga, gb, haa, hab, hbb }
}

/** The maximum-likelihood curve and its standard errors (inverse Hessian; a's by the delta method). */
export const fitCurve = (cells: ReadonlyArray<Cell>): ArrivalCurve => {
  const n = cells.reduce((s, c) => s + c.count, 0)
  const exposure = cells.reduce((s, c) => s + c.exposureSec, 0)
  if (n === 0 || exposure <= 0) return { a_per_sec: 0, b_per_tick: 0, a_se: 0, b_se: 0, arrivals: n }
  let alpha = Math.log(n / exposure)
  let b = 0
  let f = negLogLik(cells, alpha, b)
  for (let iter = 0; iter < 200; iter++) {
    const d = derivatives(cells, alpha, b)
    const det = d.haa * d.hbb - d.hab * d.hab
    if (!(det > 0)) break // one spread only: the slope is not identified, keep b = 0
    const da = (d.hbb * d.ga - d.hab * d.gb) / det
    const db = (d.haa * d.gb - d.hab * d.ga) / det
    let t = 1
    let next = negLogLik(cells, alpha - da, b - db)
    while (!(next <= f) && t > 1e-9) {
      t /= 2
      next = negLogLik(cells, alpha - t * da, b - t * db)
    }
    if (!(next <= f)) break
    alpha -= t * da
    b -= t * db
    const done = Math.abs(f - next) <= 1e-13 * Math.max(1, Math.abs(f))
    f = next
    if (done) break
  }
  const d = derivatives(cells, alpha, b)
  const det = d.haa * d.hbb - d.hab * d.hab
  const varAlpha = det > 0 ? d.hbb / det : 1 / d.haa
  const varB = det > 0 ? d.haa / det : 0
  const a = Math.exp(alpha)
  return { a_per_sec: a, b_per_tick: b, a_se: a * Math.sqrt(varAlpha), b_se: Math.sqrt(varB), arrivals: n }
}
