// How makers follow the book, from tapes alone (docs/backtesting.md "Makers that follow the book").
// A re-quote is a run of one follower's adds in one market within one second (follow.ts says who
// follows); its centre is the mid of its own best bid and ask after the run, against the mid of
// everyone else's book just before it. The slope is the least-squares line through 0 of the
// centre's changes on the others' mid's changes between a maker's consecutive re-quotes in a
// market (at most MAX_GAP_SEC apart), pooled over every follower of every tape.
import { type Dataset, KIND_ADD, KIND_CANCEL, KIND_TRADE } from "../dataset.ts"
import { followersOf, ownerMarketKey, TapeBook } from "../follow.ts"
import { type FollowFit, round } from "./model.ts"

/** Consecutive re-quotes further apart than this are not paired (the maker was away, or the book changed hands). */
export const MAX_GAP_SEC = 120

interface Sums {
  sxy: number
  sxx: number
  syy: number
  n: number
  requotes: number
  makers: number
}

const addTape = (d: Dataset, acc: Sums): void => {
  const followers = followersOf(d)
  acc.makers += followers.reduce((s, f) => s + f, 0)
  const book = new TapeBook()
  const last = new Map<number, { centre2: number; others2: number; sec: number }>()
  let i = 0
  while (i < d.count) {
    const k = d.kind[i]!
    if (k === KIND_TRADE) book.filled(d.market[i]!, d.orderId[i]!, d.size[i]!)
    else if (k === KIND_CANCEL) book.cancel(d.orderId[i]!)
    if (k !== KIND_ADD || followers[d.owner[i]!] !== 1) {
      if (k === KIND_ADD) book.add(d.market[i]!, d.orderId[i]!, d.owner[i]!, d.side[i] === 0, d.priceBps[i]!, d.size[i]!)
      i++
      continue
    }
    const owner = d.owner[i]!
    const market = d.market[i]!
    const sec = Math.floor(d.tMs[i]! / 1000)
    const others2 = book.restMid2(market, owner)
    // The run: this owner's adds and anyone's cancels in this market and second, until a trade or another owner's add.
    let j = i
    for (; j < d.count && Math.floor(d.tMs[j]! / 1000) === sec && d.kind[j] !== KIND_TRADE; j++) {
      if (d.kind[j] === KIND_ADD) {
        if (d.owner[j] !== owner || d.market[j] !== market) break
        book.add(market, d.orderId[j]!, owner, d.side[j] === 0, d.priceBps[j]!, d.size[j]!)
      } else if (d.kind[j] === KIND_CANCEL) book.cancel(d.orderId[j]!)
    }
    i = j
    const centre2 = book.ownMid2(market, owner)
    if (others2 < 0 || centre2 < 0) continue
    acc.requotes++
    const key = ownerMarketKey(owner, market)
    const prev = last.get(key)
    last.set(key, { centre2, others2, sec })
    if (prev === undefined || sec - prev.sec > MAX_GAP_SEC) continue
    const x = (others2 - prev.others2) / 2
    const y = (centre2 - prev.centre2) / 2
    acc.sxy += x * y
    acc.sxx += x * x
    acc.syy += y * y
    acc.n++
  }
}

/** The slope pooled over every follower of every tape, with its standard error and R² (through 0); null when no follower moved. */
export const fitFollow = (datasets: ReadonlyArray<Dataset>): FollowFit | null => {
  const acc: Sums = { sxy: 0, sxx: 0, syy: 0, n: 0, requotes: 0, makers: 0 }
  for (const d of datasets) addTape(d, acc)
  if (acc.n < 2 || acc.sxx === 0) return null
  const slope = acc.sxy / acc.sxx
  const residual = Math.max(0, acc.syy - slope * acc.sxy)
  return {
    form: "each re-quoting maker's limit orders move by slope × (the rest-of-book mid with us − the rest-of-book mid in the tape), whole ticks",
    slope: round(slope),
    slope_se: round(Math.sqrt(residual / (acc.n - 1) / acc.sxx)),
    r_squared: round(acc.syy === 0 ? 0 : 1 - residual / acc.syy),
    pairs: acc.n,
    requotes: acc.requotes,
    makers: acc.makers
  }
}
