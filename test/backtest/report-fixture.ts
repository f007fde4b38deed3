// A generated two-day run for the report-page tests: taker fees (so maker rebates are paid),
// both days closed (so LP rewards are paid), a low skew tolerance (pauses) and a stop loss
// (stops), over the synthetic generator's four markets.
import { type BacktestConfig, DEFAULT_CONFIG } from "../../sim/backtest/config.ts"
import type { Dataset } from "../../sim/backtest/dataset.ts"
import { applyKnobs } from "../../sim/backtest/params.ts"
import { syntheticDataset, DEFAULT_START_SEC } from "../../sim/backtest/synthetic.ts"

export const TWO_DAYS_SEC = 2 * 86_400

export const chartDataset = (trades = 30_000): Dataset => syntheticDataset({ seed: "charts", trades, durationSec: TWO_DAYS_SEC })

export const CHART_CONFIG: BacktestConfig = applyKnobs(
  { ...DEFAULT_CONFIG, queueModel: "prob", takerFeeBps: 10, provenance: { ...DEFAULT_CONFIG.provenance, fees: "given" }, endSec: DEFAULT_START_SEC + TWO_DAYS_SEC },
  { tolerance: 20, stop_loss: 60_000_000 }
)
