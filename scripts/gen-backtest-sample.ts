// Writes the backtester's shipped sample (fixtures/backtest/): one UTC day (2025-01-15) of
// seeded synthetic flow over four markets, from sim/backtest/synthetic.ts.
//   sample-trades.csv  ts_sec, market_id, price_bps, size, taker_side   (20,000 trades)
//   sample-book.csv    ts_sec, market_id, side, price_bps, size          (5 levels a side every 10 minutes)
// `node --import tsx scripts/gen-backtest-sample.ts [--out DIR] [--trades N] [--seed S]`
// Deterministic: the same arguments write byte-identical files.
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { generateSynthetic } from "../sim/backtest/synthetic.ts"

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback
}

const out = arg("out", "fixtures/backtest")
const trades = Number(arg("trades", "20000"))
const seed = arg("seed", "sample")
const { trades: t, levels } = generateSynthetic({ seed, trades, snapshotEverySec: 600 })

const tradeLines = ["ts_sec,market_id,price_bps,size,taker_side"]
for (let i = 0; i < t.n; i++) {
  tradeLines.push(`${t.tMs[i]! / 1000},${t.marketNames[t.market[i]!]},${t.priceBps[i]},${t.size[i]},${t.side[i] === 0 ? "buy" : "sell"}`)
}
const bookLines = ["ts_sec,market_id,side,price_bps,size"]
if (levels !== null) {
  for (let i = 0; i < levels.n; i++) {
    bookLines.push(`${levels.tMs[i]! / 1000},${levels.marketNames[levels.market[i]!]},${levels.isAsk[i] === 1 ? "ask" : "bid"},${levels.priceBps[i]},${levels.size[i]}`)
  }
}
mkdirSync(out, { recursive: true })
writeFileSync(join(out, "sample-trades.csv"), `${tradeLines.join("\n")}\n`)
writeFileSync(join(out, "sample-book.csv"), `${bookLines.join("\n")}\n`)
process.stdout.write(`wrote ${join(out, "sample-trades.csv")} (${t.n} trades) and ${join(out, "sample-book.csv")} (${levels?.n ?? 0} levels)\n`)
