// The arguments of `npm run sim`, as one table of flags. Each flag says what a seed sweep does
// with it — carries it to every seed's job (local thread or work queue) and into each reproduce
// command, or refuses it — so no flag can be silently dropped by a sweep (a sweep once ran
// without --plant). test/sim/cli-flags.test.ts walks this table: a new flag is checked as well.
import { parseSeeds } from "./sweep/sweep.ts"
import { SIGNING_MODES, type SigningMode } from "./world/signatures.ts"
import { DEFAULT_TAPE_INTERVAL_SEC } from "./scenario/tape.ts"
import { PLANT_NAMES } from "./testing/plants.ts"
import { isQueueUrl } from "./queue/protocol.ts"

export interface Args {
  file: string
  seed?: number
  seeds?: number[]
  durationSec?: number
  json: boolean
  log: string | null | undefined
  tape?: string
  tapeIntervalSec: number | null
  tapeFormat: "csv" | "parquet"
  without: string[]
  signing?: SigningMode
  /** Test-only: a planted bug by name (sim/testing/ignore-bytes-written.ts, sim/testing/no-expected-position.ts), to reproduce a test's failing run. */
  plant?: string
  /** A sweep's seeds go to this JetStream work queue (npm run sim:worker runs them) instead of local threads. */
  queue?: string
}

/**
 * What `--seeds` does with a flag. "sweep": honoured by every seed of a sweep (and its reproduce
 * command when it shapes the run); "sweep-only": means nothing without --seeds; "refused": a
 * sweep refuses it (exit 2) with `why`.
 */
export type InSweep = { readonly kind: "sweep" } | { readonly kind: "sweep-only" } | { readonly kind: "refused"; readonly why: string }

export interface Flag {
  /** A valid value (usage and tests); absent for a flag that takes none. */
  readonly example?: string
  readonly inSweep: InSweep
  readonly set: (out: Args, value: string) => void
}

const DURATION = /^(\d+(?:\.\d+)?)(s|m|h|d)$/
const UNIT: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 }

const SWEEP: InSweep = { kind: "sweep" }
const ONE_RUN_TAPE: InSweep = { kind: "refused", why: "a tape records one run's market: give one --seed" }

export const FLAGS: Readonly<Record<string, Flag>> = {
  "--json": { inSweep: SWEEP, set: (out) => void (out.json = true) },
  "--seed": {
    example: "3",
    inSweep: { kind: "refused", why: "--seed and --seeds exclude each other" },
    set: (out, v) => {
      if (!/^\d+$/.test(v)) throw new Error(`--seed ${v}: expected a non-negative integer`)
      out.seed = Number(v)
    }
  },
  "--seeds": { example: "1..3", inSweep: { kind: "sweep-only" }, set: (out, v) => void (out.seeds = parseSeeds(v)) },
  "--duration": {
    example: "60s",
    inSweep: SWEEP,
    set: (out, v) => {
      const m = DURATION.exec(v)
      if (m === null) throw new Error(`--duration ${v}: expected e.g. 90s, 30m, 2h`)
      out.durationSec = Number(m[1]) * UNIT[m[2]!]!
    }
  },
  "--tape": { example: "out/tape", inSweep: ONE_RUN_TAPE, set: (out, v) => void (out.tape = v) },
  "--tape-interval": {
    example: "10s",
    inSweep: ONE_RUN_TAPE,
    set: (out, v) => {
      const m = DURATION.exec(v)
      if (m === null && v !== "0" && v !== "none") throw new Error(`--tape-interval ${v}: expected e.g. 1s, 10s, 1m, 0 (every change) or none (trades only)`)
      out.tapeIntervalSec = v === "none" ? null : m === null ? 0 : Number(m[1]) * UNIT[m[2]!]!
      if (out.tapeIntervalSec !== null && !Number.isInteger(out.tapeIntervalSec)) throw new Error(`--tape-interval ${v}: a whole number of seconds`)
    }
  },
  "--tape-format": {
    example: "parquet",
    inSweep: ONE_RUN_TAPE,
    set: (out, v) => {
      if (v !== "csv" && v !== "parquet") throw new Error(`--tape-format ${v}: csv or parquet`)
      out.tapeFormat = v
    }
  },
  "--without": {
    example: "noise-1-0",
    inSweep: { kind: "refused", why: "a counterfactual compares one seed with and without an agent: give one --seed" },
    set: (out, v) => void out.without.push(v)
  },
  "--signatures": {
    example: "ed25519",
    inSweep: { kind: "refused", why: "signing changes no journal, only the cost of one run: give one --seed" },
    set: (out, v) => {
      if (!(SIGNING_MODES as readonly string[]).includes(v)) throw new Error(`--signatures ${v}: ${SIGNING_MODES.join(" or ")}`)
      out.signing = v as SigningMode
    }
  },
  "--plant": {
    example: "ignore-bytes-written",
    inSweep: SWEEP,
    set: (out, v) => {
      if (!PLANT_NAMES.includes(v)) throw new Error(`--plant ${v}: known planted bugs: ${PLANT_NAMES.join(", ")}`)
      out.plant = v
    }
  },
  "--queue": {
    example: "nats://127.0.0.1:4222",
    inSweep: { kind: "sweep-only" },
    set: (out, v) => {
      if (!isQueueUrl(v)) throw new Error(`--queue ${v}: expected the work queue's NATS servers, e.g. nats://host:4222 or nats://a:4222,nats://b:4222`)
      out.queue = v
    }
  },
  "--log": { example: "out/sim", inSweep: SWEEP, set: (out, v) => void (out.log = v) },
  "--no-log": { inSweep: SWEEP, set: (out) => void (out.log = null) }
}

export const parseArgs = (argv: ReadonlyArray<string>): Args => {
  const files: string[] = []
  const given: string[] = []
  const out: Args = { file: "", json: false, log: undefined, tapeIntervalSec: DEFAULT_TAPE_INTERVAL_SEC, tapeFormat: "csv", without: [] }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (!a.startsWith("--")) {
      files.push(a)
      continue
    }
    const flag = Object.hasOwn(FLAGS, a) ? FLAGS[a]! : undefined
    if (flag === undefined) throw new Error(`unknown option ${a}`)
    let value = ""
    if (flag.example !== undefined) {
      const v = argv[++i]
      if (v === undefined) throw new Error(`${a} needs a value`)
      value = v
    }
    flag.set(out, value)
    given.push(a)
  }
  if (files.length !== 1) throw new Error("give exactly one scenario file")
  const sweep = out.seeds !== undefined
  for (const a of given) {
    const s = FLAGS[a]!.inSweep
    if (sweep && s.kind === "refused") throw new Error(a === "--seed" ? s.why : `${a} is refused with --seeds: ${s.why}`)
    if (!sweep && s.kind === "sweep-only" && a !== "--seeds") throw new Error(`${a} runs a sweep: give --seeds`)
  }
  // Tape options without a tape would change nothing, silently.
  if (out.tape === undefined) for (const a of ["--tape-interval", "--tape-format"]) if (given.includes(a)) throw new Error(`${a} shapes a tape: give --tape DIR`)
  out.file = files[0]!
  return out
}

/**
 * The command that reruns one seed exactly — of a single run or of a sweep's seed: its scenario,
 * its seed and every flag that shapes the run.
 */
export const reproduceCommand = (args: Args, seed: number): string =>
  [
    `npm run sim -- ${args.file} --seed ${seed}`,
    ...(args.durationSec === undefined ? [] : [`--duration ${args.durationSec}s`]),
    ...(args.signing === undefined ? [] : [`--signatures ${args.signing}`]),
    ...args.without.map((a) => `--without ${a}`),
    ...(args.plant === undefined ? [] : [`--plant ${args.plant}`])
  ].join(" ")
