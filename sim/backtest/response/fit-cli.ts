// `npm run backtest -- fit-response --data DIR [DIR…] --out model.json`: fits the market-response
// model on tapes (trades and book snapshots only: no simulator definitions, so a live export
// works as well), prints its parameters and goodness of fit, and writes the model file.
// Bad input is a BacktestInputError: the backtest CLI prints one line and exits 2.
import { mkdirSync, writeFileSync } from "node:fs"
import { dirname } from "node:path"
import { BacktestInputError } from "../dataset.ts"
import { isTapeDir, loadTape } from "../load.ts"
import { ARRIVAL_HORIZON_SEC, type HorizonRule } from "./edge.ts"
import { fitResponse, type FitInput } from "./fit.ts"
import { edgeTableText, responseLines } from "./format.ts"
import type { ResponseModel } from "./model.ts"

export const FIT_USAGE = `usage: npm run backtest -- fit-response --data DIR [DIR…] --out model.json [--horizon S|likelihood (the arrival's horizon in seconds, default ${ARRIVAL_HORIZON_SEC}; likelihood: the candidate that explains the arrival times best)] [--json]`

/** What `--horizon` (and fidelity's `--response-horizon`) accepts, as their refusals say it. */
export const HORIZON_EXPECTED = "expected whole seconds from 1 to 86400, or likelihood"

/** `--horizon`: whole seconds, 1 s … 1 day, or "likelihood" (edge.ts HorizonRule); null when the text is neither. */
export const parseHorizonRule = (text: string): HorizonRule | null => {
  if (text === "likelihood") return text
  const v = Number(text)
  return /^\d+$/.test(text) && v >= 1 && v <= 86_400 ? v : null
}

interface FitArgs {
  readonly dirs: string[]
  readonly out: string
  readonly json: boolean
  readonly horizon: HorizonRule
}

const parseFitArgs = (argv: ReadonlyArray<string>): FitArgs | null => {
  const dirs: string[] = []
  let out: string | null = null
  let json = false
  let horizon: HorizonRule = ARRIVAL_HORIZON_SEC
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (a === "--help" || a === "-h") return null
    if (a === "--json") json = true
    else if (a === "--data") {
      // --data takes one or more directories, up to the next flag; it may also be repeated.
      const start = dirs.length
      while (i + 1 < argv.length && !argv[i + 1]!.startsWith("--")) dirs.push(argv[++i]!)
      if (dirs.length === start) throw new BacktestInputError("fit-response: --data needs a tape directory")
    } else if (a === "--out") {
      const v = argv[++i]
      if (v === undefined || v.startsWith("--")) throw new BacktestInputError("fit-response: --out needs a file")
      out = v
    } else if (a === "--horizon") {
      const v = argv[++i]
      const rule = v === undefined ? null : parseHorizonRule(v)
      if (rule === null) throw new BacktestInputError(`fit-response: --horizon ${v ?? ""}: ${HORIZON_EXPECTED}`)
      horizon = rule
    } else throw new BacktestInputError(`fit-response: unknown argument "${a}" (${FIT_USAGE})`)
  }
  if (dirs.length === 0) throw new BacktestInputError(`fit-response: give the tapes with --data DIR [DIR…] (${FIT_USAGE})`)
  if (out === null) throw new BacktestInputError(`fit-response: give the model file with --out FILE (${FIT_USAGE})`)
  return { dirs, out, json, horizon }
}

/** Loads each tape's trades and book snapshots, and apart its order events (the makers' re-quotes, when the tape has them). */
export const loadFitInputs = async (dirs: ReadonlyArray<string>): Promise<FitInput[]> => {
  const inputs: FitInput[] = []
  for (const dir of dirs) {
    if (!isTapeDir(dir)) throw new BacktestInputError(`fit-response: ${dir} is not a tape directory (npm run sim -- <scenario> --tape DIR, or npm run export)`)
    const { dataset, meta } = await loadTape(dir, null, "none")
    if (dataset.snapshots === 0) throw new BacktestInputError(`fit-response: ${dir} has no book snapshots (the touch is read from them; write the tape with --tape-interval 0 or 1s)`)
    const { dataset: orders } = await loadTape(dir, null, "flow")
    inputs.push({ source: dir, dataset, endMs: Math.max(meta.to_sec * 1000, dataset.tMs[dataset.count - 1]!), ...(orders.orders > 0 ? { orders } : {}) })
  }
  return inputs
}

/** Fits, checks there was something to fit, and writes the file; returns the model. */
export const fitTapes = async (dirs: ReadonlyArray<string>, out: string, horizon: HorizonRule = ARRIVAL_HORIZON_SEC): Promise<ResponseModel> => {
  const model = fitResponse(await loadFitInputs(dirs), horizon)
  if (model.arrival.arrivals === 0) throw new BacktestInputError(`fit-response: no taker traded at a two-sided book in ${dirs.join(", ")}: nothing to fit`)
  if (model.edge === null || model.edge.buy.buckets.length === 0 || model.edge.sell.buckets.length === 0) {
    const window = horizon === "likelihood" ? "" : ` (each tape is read up to its end − ${horizon} s: give longer tapes or a shorter --horizon)`
    throw new BacktestInputError(`fit-response: the book in ${dirs.join(", ")} is never two-sided both now and a horizon later: no edge to fit${window}`)
  }
  mkdirSync(dirname(out), { recursive: true })
  writeFileSync(out, `${JSON.stringify(model, null, 2)}\n`)
  return model
}

export const fitResponseCli = async (argv: ReadonlyArray<string>): Promise<number> => {
  const args = parseFitArgs(argv)
  if (args === null) {
    process.stdout.write(`${FIT_USAGE}\n`)
    return 0
  }
  const model = await fitTapes(args.dirs, args.out, args.horizon)
  const table = edgeTableText(model)
  const text = `${responseLines(model).map(([k, v]) => `${k.padEnd(11)}  ${v}`).join("\n")}\n${table.length === 0 ? "" : `\narrival by edge (observed vs fitted takers per bucket):\n${table.join("\n")}\n\n`}wrote ${args.out}\n`
  if (args.json) {
    process.stderr.write(text)
    process.stdout.write(`${JSON.stringify(model)}\n`)
  } else process.stdout.write(text)
  return 0
}
