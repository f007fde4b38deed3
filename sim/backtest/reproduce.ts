// What a report carries so anyone can run it again: the exact command, each input file with its
// sha256, and every setting the run used (strategy parameters, queue and latency models, fees,
// rewards pool, seed). The CLI fills it in; the HTML page and the JSON show it.
import { createHash } from "node:crypto"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import type { StrategyParams } from "../../src/lp/strategy.ts"
import type { BacktestConfig, LatencySpec } from "./config.ts"

export interface InputFile {
  readonly path: string
  readonly bytes: number
  readonly sha256: string
}

export interface Reproduction {
  /** The command as run, shell-quoted (`-s`: npm prints no banner, so --json output stays pure JSON): run it from the repository root. */
  readonly command: string
  readonly inputs: ReadonlyArray<InputFile>
  /** Every setting, flattened to name → value, in a fixed order. */
  readonly settings: ReadonlyArray<readonly [string, string]>
}

const SAFE = /^[A-Za-z0-9_\-+=/.,:@%]+$/
export const shellQuote = (arg: string): string => (SAFE.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`)

export const commandOf = (argv: ReadonlyArray<string>): string => ["npm", "run", "-s", "backtest", "--", ...argv].map(shellQuote).join(" ").replace(/ --$/, "")

const digest = (path: string): InputFile => {
  const buf = readFileSync(path)
  return { path, bytes: buf.length, sha256: createHash("sha256").update(buf).digest("hex") }
}

/** The files a run read: a file as given, or every file of a tape directory (sorted by name). */
export const inputFiles = (paths: ReadonlyArray<string>): InputFile[] =>
  paths.flatMap((p) =>
    statSync(p).isDirectory()
      ? readdirSync(p).sort().map((f) => join(p, f)).filter((f) => statSync(f).isFile()).map(digest)
      : [digest(p)]
  )

const ms = (l: LatencySpec): string =>
  `${(l.tickMs ?? 0) > 0 ? `stepped every ${l.tickMs} ms on the book as it stands, then ` : ""}${l.baseMs} ms + exponential jitter, mean ${l.jitterMs} ms`

/** Every setting of the run, the strategy's as the markets ran it. */
export const settingsOf = (config: BacktestConfig, params: StrategyParams | undefined): Array<[string, string]> => {
  const s = config.strategy
  const out: Array<[string, string]> = [
    ["seed", config.seed],
    ["capital (micro-USDC)", String(config.capitalMicro)],
    ["strategy", s.kind === "preset" ? `preset ${s.preset}` : `spec ${JSON.stringify(s.spec)}`],
    ["overrides", JSON.stringify(config.overrides)]
  ]
  for (const [k, v] of Object.entries(params ?? {})) out.push([`strategy.${k}`, String(v)])
  out.push(
    ["queue model", config.queueModel === "prob" ? `prob, power ${config.queuePower}` : "risk-averse"],
    ["order-entry latency", ms(config.entryLatency)],
    ["feed latency", ms(config.feedLatency)],
    ["synthetic depth", `${config.bgLevels} levels a side, top level ${config.bgDepth ?? "5 × median trade"} contracts, churn ${config.bgChurnPct}% of trades, ${config.bgMakers} background makers`],
    ["maker rebate (bps)", `${config.makerRebateBps} (${config.provenance.fees})`],
    ["taker fee (bps)", `${config.takerFeeBps}${Object.keys(config.takerFeeBpsByMarket).length > 0 ? `; per market ${JSON.stringify(config.takerFeeBpsByMarket)}` : ""} (${config.provenance.fees})`],
    ["rewards", `pool ${config.rewards.dailyBudgetMicro / 1e6} USDC a day, band ${config.rewards.bandSpreadBpsMax} bps, size cutoff ${config.rewards.minSizeContracts}, cap ${config.rewards.perWalletCapPct}% per wallet (${config.provenance.rewards})`],
    ["book-move fills", String(config.bookMoveFills)],
    ["quoted markets", config.quoteMarkets === null ? "all" : config.quoteMarkets.join(", ")],
    ["strategy start (unix s)", config.startSec === null ? "with the data" : String(config.startSec)],
    ["data start (unix s)", config.beginSec === null ? "the first event" : String(config.beginSec)],
    ["data end (unix s)", config.endSec === null ? "the last event" : String(config.endSec)],
    ["sample interval (s)", String(config.sampleSec)],
    ["bots ahead in the runner's pass", `${Math.min(config.botsAheadInPass, config.lpBotsInPass.length)} of the tape's ${config.lpBotsInPass.length} LP bots`],
    ["market-response model", config.response === null ? "none" : config.response.edge !== null
      ? `version 2, ${config.response.sources.length} tape(s); arrival by edge against the tape's mid ${config.response.edge.horizon_sec} s later, buckets of ${config.response.edge.bucket_ticks} ticks`
      : `version 1, ${config.response.sources.length} tape(s); informed share ${config.response.information.informed_share} at ${config.response.information.horizon_sec} s`]
  )
  return out
}
