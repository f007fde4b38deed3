// One sweep run's report page, written by whichever thread ran it (a sweep worker, or the
// main thread for a single run): the full report, with the command that reruns it alone.
import { mkdirSync, writeFileSync } from "node:fs"
import { dirname } from "node:path"
import type { BacktestConfig } from "../config.ts"
import { renderHtml } from "../html.ts"
import type { BacktestReport } from "../report.ts"
import { commandOf, type InputFile, settingsOf } from "../reproduce.ts"

export interface RunPage {
  readonly path: string
  readonly title: string
  /** The backtest arguments that run this combination alone (sweep.ts runArgv). */
  readonly argv: ReadonlyArray<string>
  readonly inputs: ReadonlyArray<InputFile>
}

/** The page's HTML (a queue worker sends it back for the caller to write at page.path). */
export const runPageHtml = (page: RunPage, config: BacktestConfig, report: BacktestReport): string => {
  const reproduce = { command: commandOf(page.argv), inputs: page.inputs, settings: settingsOf(config, report.markets[0]?.params) }
  return renderHtml(report, page.title, reproduce)
}

export const writeRunPage = (page: RunPage, config: BacktestConfig, report: BacktestReport): void => {
  mkdirSync(dirname(page.path), { recursive: true })
  writeFileSync(page.path, runPageHtml(page, config, report))
}
