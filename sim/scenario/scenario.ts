// The scenario file format (docs/simulation.md): JSON, checked with Effect Schema.
// A bad file fails with every problem listed as `path.to.field: what is wrong`.
import { Either, ParseResult, Schema } from "effect"
import { readFileSync } from "node:fs"

const UNIT_SEC: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86_400 }

/** What a field means, for the generated reference (sim/scenario/scenario-reference.ts); validation ignores it. */
export const DocId: unique symbol = Symbol.for("twinbook/scenario-doc")
/** The reference's name for a type (durations), where the schema's own name is not one a person reads. */
export const TypeNameId: unique symbol = Symbol.for("twinbook/scenario-type-name")
const doc =
  (text: string) =>
  <S extends Schema.Annotable.All>(s: S): Schema.Annotable.Self<S> =>
    s.annotations({ [DocId]: text }) as Schema.Annotable.Self<S>

/** Seconds, as a number or a string such as "90s", "15m", "24h", "2d". */
const Duration = Schema.transformOrFail(Schema.Union(Schema.Number, Schema.String), Schema.Number, {
  strict: true,
  decode: (value, _opts, ast) => {
    if (typeof value === "number") {
      return Number.isFinite(value) && value >= 0 ? ParseResult.succeed(value) : ParseResult.fail(new ParseResult.Type(ast, value, "a duration must be ≥ 0 seconds"))
    }
    const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(value.trim())
    if (m === null) return ParseResult.fail(new ParseResult.Type(ast, value, `expected a duration such as 30s, 15m, 24h (got ${JSON.stringify(value)})`))
    return ParseResult.succeed(Number(m[1]) * UNIT_SEC[m[2]!]!)
  },
  encode: (sec) => ParseResult.succeed(sec)
}).annotations({ [TypeNameId]: "duration" })

const Int = (min: number, max: number) => Schema.Int.pipe(Schema.between(min, max))
const Pct = Schema.Number.pipe(Schema.between(0, 100))
const Usdc = Schema.Number.pipe(Schema.between(0, 1_000_000_000))

const AgentCommon = {
  count: Int(1, 100_000).pipe(doc("Agents of this group, named `<kind>-<group>-<index>`.")),
  deposit_usdc: Schema.optionalWith(Usdc.pipe(doc("USDG each agent deposits through the chain at start.")), { default: () => 1_000 }),
  interval: Schema.optionalWith(Duration.pipe(doc("Mean time between the agent's actions (exponential inter-arrival).")), { default: () => 60 }),
  withdraw_pct: Schema.optionalWith(Pct.pipe(doc("Chance per action of withdrawing part of the balance instead of trading.")), { default: () => 0 }),
  websocket: Schema.optionalWith(Schema.Boolean.pipe(doc("Subscribes to its portfolio channel and checks frames against its own view.")), { default: () => true })
}

const Noise = Schema.Struct({ kind: Schema.Literal("noise"), ...AgentCommon, max_size: Schema.optionalWith(Int(1, 1_000_000).pipe(doc("Each order's size is drawn from 1 to this.")), { default: () => 50 }) })
const Informed = Schema.Struct({
  kind: Schema.Literal("informed"),
  ...AgentCommon,
  max_size: Schema.optionalWith(Int(1, 1_000_000).pipe(doc("Each order's size is drawn from 1 to this.")), { default: () => 100 }),
  edge_bps: Schema.optionalWith(Int(0, 5_000).pipe(doc("Trades only when the book is mispriced by more than this against the hidden true probability.")), { default: () => 200 })
})
const MarketMaker = Schema.Struct({
  kind: Schema.Literal("market_maker"),
  ...AgentCommon,
  spread_bps: Schema.optionalWith(Int(2, 5_000).pipe(doc("Quoted spread around the mid (while the book lacks a side: a draw within 500 bps of the hidden probability).")), { default: () => 200 }),
  size: Schema.optionalWith(Int(1, 1_000_000).pipe(doc("Shares per quote.")), { default: () => 100 }),
  levels: Schema.optionalWith(Int(1, 10).pipe(doc("Quotes per side, 50 bps apart; each action cancels all and re-posts.")), { default: () => 2 }),
  markets_per_agent: Schema.optionalWith(Int(1, 500).pipe(doc("Markets it quotes, drawn at start.")), { default: () => 5 })
})
const LpCommon = {
  ...AgentCommon,
  preset: Schema.optionalWith(Schema.Literal("conservative", "balanced", "aggressive").pipe(doc("The src/lp strategy preset.")), { default: () => "balanced" as const }),
  capital_usdc: Schema.optionalWith(Usdc.pipe(doc("Capital the strategy sizes its quotes from (at most the deposit).")), { default: () => 1_000 }),
  markets_per_agent: Schema.optionalWith(Int(1, 20).pipe(doc("Markets it provides liquidity in, drawn at start.")), { default: () => 2 })
}
/** Runs the src/lp strategy client-side and quotes over the API. */
const LpStrategy = Schema.Struct({ kind: Schema.Literal("lp_strategy"), ...LpCommon })
/** Delegates a session key to the server-managed LP bot (/v1/lp-bot/*). */
const LpBot = Schema.Struct({ kind: Schema.Literal("lp_bot"), ...LpCommon })
const Careless = Schema.Struct({
  kind: Schema.Literal("careless"),
  ...AgentCommon,
  mistakes: Schema.optionalWith(Schema.Array(Schema.Literal("stale_timestamp", "reused_nonce", "malformed_body", "wrong_signature", "bad_price", "unknown_market", "overspend", "no_session")).pipe(doc("Kinds of bad input to send; each must get its right 4xx.")), {
    default: () => ["stale_timestamp", "reused_nonce", "malformed_body", "wrong_signature", "bad_price", "unknown_market", "overspend", "no_session"] as const
  })
})
const Spammer = Schema.Struct({
  kind: Schema.Literal("spammer"),
  ...AgentCommon,
  burst: Schema.optionalWith(Int(1, 10_000).pipe(doc("Requests in one burst; bursts follow `interval`.")), { default: () => 200 }),
  share_ip: Schema.optionalWith(Schema.Boolean.pipe(doc("The spammers of a group share one source IP (per-IP limits), else one IP each.")), { default: () => true })
})
export const AgentSpec = Schema.Union(Noise, Informed, MarketMaker, LpStrategy, LpBot, Careless, Spammer)
export type AgentSpec = typeof AgentSpec.Type

const At = Duration.pipe(doc("When, from the start of the run."))
const Window = { at: At, duration: Schema.optionalWith(Duration.pipe(doc("Undone after this long (0: never).")), { default: () => 0 }) }
const FaultSpec = Schema.Union(
  Schema.Struct({ kind: Schema.Literal("trading_pause"), ...Window }),
  Schema.Struct({ kind: Schema.Literal("engine_unreachable"), ...Window }),
  Schema.Struct({ kind: Schema.Literal("market_halt"), ...Window, market: Int(0, 10_000).pipe(doc("The market's index, 0 to `markets.count` − 1.")) }),
  Schema.Struct({
    kind: Schema.Literal("market_resolve"),
    at: At,
    market: Int(0, 10_000).pipe(doc("The market's index, 0 to `markets.count` − 1.")),
    winner: Schema.optionalWith(Schema.Literal("yes", "no", "truth").pipe(doc("`truth`: the outcome the hidden probability path ends nearer to.")), { default: () => "truth" as const })
  }),
  Schema.Struct({
    kind: Schema.Literal("rpc_errors"),
    ...Window,
    rate_pct: Pct.pipe(doc("Share of calls to the chosen methods that fail.")),
    methods: Schema.optionalWith(Schema.Array(Schema.Literal("head", "blockHash", "transfersTo", "sweep", "payout", "receipt", "balanceOf")).pipe(doc("The chain RPC methods that fail.")), {
      default: () => ["head", "transfersTo", "sweep", "payout", "receipt"] as const
    })
  }),
  Schema.Struct({ kind: Schema.Literal("reorg"), at: At, depth: Int(1, 64).pipe(doc("Blocks dropped from the head; their transactions are re-mined.")) }),
  Schema.Struct({ kind: Schema.Literal("ws_disconnect"), at: At, fraction_pct: Schema.optionalWith(Pct.pipe(doc("Share of the open sockets dropped (code 1006).")), { default: () => 100 }) }),
  Schema.Struct({ kind: Schema.Literal("crash"), at: At, down: Schema.optionalWith(Duration.pipe(doc("Until a new process boots from the journal.")), { default: () => 5 }) }),
  Schema.Struct({ kind: Schema.Literal("network"), ...Window, latency_ms: Schema.optional(Schema.Tuple(Int(0, 60_000), Int(0, 60_000)).pipe(doc("New one-way latency range, min and max ms (absent: unchanged)."))), drop_pct: Schema.optional(Pct.pipe(doc("New request drop rate (absent: unchanged)."))) }),
  // The sequencer pair's faults (a `cluster` block): sim/world/cluster-world.ts.
  /** The leader is killed; a new process starts in its slot as a standby `down` later. */
  Schema.Struct({ kind: Schema.Literal("leader_crash"), at: At, down: Schema.optionalWith(Duration.pipe(doc("Until a new process starts in the slot, as a standby.")), { default: () => 5 }) }),
  /**
   * The leader is paused at its next append (that append unsent) for `pause`, then resumed: a zombie.
   * `until_takeover`: resumed instead 0–12 ms after another process acquires the lease (`pause` the
   * cap), so its held append races the new leader's catch-up and term marker.
   */
  Schema.Struct({
    kind: Schema.Literal("zombie"),
    at: At,
    pause: Schema.optionalWith(Duration.pipe(doc("How long the leader is paused at its next append (the cap with `until_takeover`).")), { default: () => 10 }),
    until_takeover: Schema.optionalWith(Schema.Boolean.pipe(doc("Resume 0–12 ms after another process takes the lease, racing its catch-up.")), { default: () => false })
  }),
  /** The leader's lease renewals are lost or delayed for `duration`: its lease lapses while it runs. */
  Schema.Struct({ kind: Schema.Literal("lease_expiry"), at: At, duration: Schema.optionalWith(Duration.pipe(doc("How long the leader's renewals are lost or delayed.")), { default: () => 10 }) }),
  /** The log is unavailable for `duration`: appends fail (time out); `land_pct` % of those reaching it commit when it is back. */
  Schema.Struct({ kind: Schema.Literal("log_unavailable"), at: At, duration: Schema.optionalWith(Duration.pipe(doc("How long appends fail (time out).")), { default: () => 5 }), land_pct: Schema.optionalWith(Pct.pipe(doc("Share of the failed appends that reached the log and commit when it is back.")), { default: () => 50 }) })
)

/** Fault kinds that need a `cluster` block. */
export const CLUSTER_FAULTS: ReadonlySet<string> = new Set(["leader_crash", "zombie", "lease_expiry", "log_unavailable"])
export type FaultSpec = typeof FaultSpec.Type

/** Random faults: a kind drawn at exponential intervals with the given mean. */
const RandomFaults = Schema.Struct({
  every: Duration.pipe(doc("Mean time between faults (exponential).")),
  kinds: Schema.Array(Schema.Literal("trading_pause", "engine_unreachable", "rpc_errors", "reorg", "ws_disconnect", "crash", "leader_crash", "zombie", "lease_expiry", "log_unavailable")).pipe(doc("The kinds drawn from, uniformly.")),
  duration: Schema.optionalWith(Duration.pipe(doc("How long each windowed fault lasts.")), { default: () => 60 })
}).pipe(doc("Faults drawn from the seed: a kind at exponential intervals."))

export const Scenario = Schema.Struct({
  name: Schema.String.pipe(Schema.minLength(1), doc("Names the logs and tables (`out/sim/<file>-seed<N>.log`).")),
  description: Schema.optionalWith(Schema.String.pipe(doc("What the scenario shows a QA engineer.")), { default: () => "" }),
  seed: Schema.optionalWith(Schema.Int.pipe(doc("Every random draw derives from it; `--seed` overrides.")), { default: () => 1 }),
  duration: Duration.pipe(doc("Virtual time agents act; then a 120 s drain and 30 s quiet. `--duration` overrides.")),
  start_time: Schema.optionalWith(Schema.Int.pipe(doc("Unix seconds at which virtual time starts (default 2026-01-01T00:00:00Z).")), { default: () => 1_767_225_600 }),
  markets: Schema.Struct({
    count: Int(1, 1_000).pipe(doc("Binary markets created at start.")),
    initial_bps: Schema.optionalWith(Schema.Tuple(Int(100, 9_900), Int(100, 9_900)).pipe(doc("Hidden true probability at start: uniform in [lo, hi] bps.")), { default: () => [2_000, 8_000] as const }),
    volatility: Schema.optionalWith(Schema.Number.pipe(Schema.between(0, 10)).pipe(doc("Volatility of the hidden probability (logit units per √hour).")), { default: () => 0.1 }),
    jumps: Schema.optional(
      Schema.Struct({
        per_hour: Schema.Number.pipe(Schema.between(0, 60), doc("Jumps per hour on average (one per minute's step with probability per_hour / 60).")),
        size: Schema.Number.pipe(Schema.between(0, 10), doc("A jump is size × a standard normal, in logit units."))
      }).pipe(doc("Jumps of the hidden probability on top of the walk (news)."))
    )
  }).pipe(doc("The markets and their hidden true probabilities.")),
  fees: Schema.optional(
    Schema.Struct({
      taker_fee_bps: Int(0, 1_000).pipe(doc("Taker fee of every market.")),
      maker_rebate_bps: Schema.optional(Int(0, 1_000).pipe(doc("Maker rebate, paid only out of the taker fees collected (absent: the engine's 5 bps).")))
    }).pipe(doc("The fee schedule set by the operator before the markets are created (POST /v1/admin/fees); takers price it in. Absent: taker fee 0, maker rebate 5 bps."))
  ),
  agents: Schema.Array(AgentSpec).pipe(Schema.minItems(1), doc("Groups of agents, by `kind`.")),
  network: Schema.optionalWith(
    Schema.Struct({
      latency_ms: Schema.optionalWith(Schema.Tuple(Int(0, 60_000), Int(0, 60_000)).pipe(doc("One-way latency range, min and max ms.")), { default: () => [1, 20] as const }),
      drop_pct: Schema.optionalWith(Pct.pipe(doc("Share of requests lost before the service.")), { default: () => 0 }),
      response_drop_pct: Schema.optionalWith(Pct.pipe(doc("Share of answers lost after the service acted.")), { default: () => 0 }),
      timeout: Schema.optionalWith(Duration.pipe(doc("A client gives up on a request after this.")), { default: () => 5 })
    }).pipe(doc("The in-process network between agents and the service.")),
    { default: () => ({ latency_ms: [1, 20] as const, drop_pct: 0, response_drop_pct: 0, timeout: 5 }) }
  ),
  chain: Schema.optionalWith(
    Schema.Struct({
      block_time: Schema.optionalWith(Duration.pipe(doc("Time between blocks.")), { default: () => 2 }),
      confirmations: Schema.optionalWith(Int(0, 64).pipe(doc("Blocks a deposit waits before it is credited.")), { default: () => 2 }),
      poll: Schema.optionalWith(Duration.pipe(doc("How often the service polls the chain (deposit watcher).")), { default: () => 2 })
    }).pipe(doc("The in-memory chain (src/chain/sim.ts).")),
    { default: () => ({ block_time: 2, confirmations: 2, poll: 2 }) }
  ),
  faults: Schema.optionalWith(Schema.Array(FaultSpec).pipe(doc("Scheduled faults, by `kind` (\"Faults\" above).")), { default: () => [] }),
  storage: Schema.optional(
    Schema.Struct({
      short_write_pct: Schema.optionalWith(Pct.pipe(doc("Per write: only part of it is written.")), { default: () => 0 }),
      enospc_pct: Schema.optionalWith(Pct.pipe(doc("Per write: ENOSPC (the process fail-stops).")), { default: () => 0 }),
      sync_eio_pct: Schema.optionalWith(Pct.pipe(doc("Per fdatasync: EIO (the process fail-stops).")), { default: () => 0 }),
      torn_tail_pct: Schema.optionalWith(Pct.pipe(doc("Per crash: a torn piece of a file's unsynced bytes is left (else they vanish).")), { default: () => 50 }),
      snapshot_flip_pct: Schema.optionalWith(Pct.pipe(doc("Per snapshot: stored with one byte flipped.")), { default: () => 0 }),
      snapshot_every: Schema.optionalWith(Duration.pipe(doc("Snapshot period.")), { default: () => 60 }),
      restart_after: Schema.optionalWith(Duration.pipe(doc("The supervisor restarts a fail-stopped process after this.")), { default: () => 2 })
    }).pipe(doc("The real journal, snapshots and recovery on a simulated faulty disk (docs/durability.md); excludes `cluster`."))
  ),
  random_faults: Schema.optional(RandomFaults),
  cluster: Schema.optional(
    Schema.Struct({
      lease_ttl: Schema.optionalWith(Duration.pipe(doc("The leader's lease lapses this long after its last renewal.")), { default: () => 3 }),
      restart_after: Schema.optionalWith(Duration.pipe(doc("A process that lost its leadership is replaced after this.")), { default: () => 2 }),
      log_latency_ms: Schema.optionalWith(Schema.Tuple(Int(0, 60_000), Int(0, 60_000)).pipe(doc("One-way latency to the log, min and max ms.")), { default: () => [1, 4] as const }),
      lease_latency_ms: Schema.optionalWith(Schema.Tuple(Int(0, 60_000), Int(0, 60_000)).pipe(doc("One-way latency to the lease, min and max ms.")), { default: () => [1, 4] as const }),
      request_timeout: Schema.optionalWith(Duration.pipe(doc("A log or lease request unanswered this long fails.")), { default: () => 2 }),
      probe_every: Schema.optionalWith(Duration.pipe(doc("The load balancer's readiness probe period.")), { default: () => 1 })
    }).pipe(doc("The sequencer pair (\"Failover\" above): two processes on a simulated replicated log and lease behind a load balancer; excludes `storage`."))
  ),
  clock: Schema.optional(
    Schema.Struct({
      steps: Schema.optionalWith(
        Schema.Array(
          Schema.Struct({
            at: At,
            by: Schema.Int.pipe(Schema.between(-30 * 86_400, 30 * 86_400), doc("Seconds the wall clock jumps (negative: back)."))
          })
        ).pipe(doc("Steps at fixed times.")),
        { default: () => [] }
      ),
      random: Schema.optional(
        Schema.Struct({
          every: Duration.pipe(doc("Mean time between steps (exponential).")),
          max_back: Schema.optionalWith(Duration.pipe(doc("Largest step back.")), { default: () => 120 }),
          max_forward: Schema.optionalWith(Duration.pipe(doc("Largest step forward.")), { default: () => 3_600 }),
          revert_after: Schema.optionalWith(Duration.pipe(doc("Each random step is undone after this.")), { default: () => 60 })
        }).pipe(doc("Steps drawn from the seed."))
      )
    }).pipe(doc("Wall-clock steps (docs/time.md): the service's wall clock jumps while its monotonic clock runs on."))
  ),
  audit: Schema.optionalWith(Schema.Struct({ every: Schema.optionalWith(Duration.pipe(doc("How often the auditor checks the whole state (plus once at the end).")), { default: () => 10 }) }).pipe(doc("The auditor's period.")), { default: () => ({ every: 10 }) }),
  expect: Schema.optionalWith(
    Schema.Struct({
      min_fills: Schema.optional(Schema.Int.pipe(doc("Scales with `--duration`."))),
      min_volume_usdc: Schema.optional(Schema.Number.pipe(doc("Scales with `--duration`."))),
      min_deposits_credited: Schema.optional(Schema.Int),
      min_withdrawals_confirmed: Schema.optional(Schema.Int.pipe(doc("Scales with `--duration`."))),
      min_orders_queued: Schema.optional(Schema.Int.pipe(doc("Scales with `--duration`."))),
      min_redeemed_markets: Schema.optional(Schema.Int),
      min_lp_bots_started: Schema.optional(Schema.Int),
      min_rewards_paid_micro: Schema.optional(Schema.Int.pipe(doc("LP rewards paid (micro-USDC) by the daily payout."))),
      min_status: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Int }).pipe(doc("e.g. { \"429\": 10 }: at least that many responses with the status."))),
      max_5xx: Schema.optionalWith(Schema.Int.pipe(doc("5xx responses allowed (default 0; engine_unreachable's 502 is counted separately).")), { default: () => 0 }),
      error_codes: Schema.optional(Schema.Array(Schema.String).pipe(doc("Error codes that must appear at least once.")))
    }).pipe(doc("Bounds on the outcome; a run that misses one fails.")),
    { default: () => ({ max_5xx: 0 }) }
  )
})
export type Scenario = typeof Scenario.Type

export class ScenarioError extends Error {
  override readonly name = "ScenarioError"
}

const pathOf = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>((acc, k) => (typeof k === "number" ? `${acc}[${k}]` : acc === "" ? String(k) : `${acc}.${String(k)}`), "")

/**
 * The schema's issues as a person reads them. An optional field is `value | undefined` on the
 * encoded side, so a bad value also fails the `undefined` branch: "faults: Expected undefined"
 * beside the real issue at or under that path says nothing and is dropped. An array's expected type
 * (every fault kind spelled out) is said as "an array".
 */
export const readableIssues = (issues: ReadonlyArray<{ readonly path: ReadonlyArray<PropertyKey>; readonly message: string }>): Array<{ path: string; message: string }> => {
  const all = issues.map((i) => ({ path: pathOf(i.path), message: i.message }))
  const under = (inner: string, outer: string): boolean => inner === outer || inner.startsWith(`${outer}.`) || inner.startsWith(`${outer}[`) || outer === ""
  const noise = (i: { path: string; message: string }): boolean => i.message.startsWith("Expected undefined, actual ")
  return all
    .filter((i) => !(noise(i) && all.some((o) => o !== i && !noise(o) && under(o.path, i.path))))
    .map((i) => ({ path: i.path, message: i.message.replace(/^Expected ReadonlyArray<[\s\S]*?>, actual /, "Expected an array, actual ") }))
}

/** Decodes a parsed scenario; throws ScenarioError listing each bad field. */
export const decodeScenario = (value: unknown, source = "scenario"): Scenario => {
  const result = Schema.decodeUnknownEither(Scenario, { errors: "all", onExcessProperty: "error" })(value)
  if (Either.isRight(result)) {
    const s = result.right
    for (const [i, f] of s.faults.entries()) {
      if ((f.kind === "market_halt" || f.kind === "market_resolve") && f.market >= s.markets.count) {
        throw new ScenarioError(`${source}: faults[${i}].market: ${f.market} is out of range (markets.count is ${s.markets.count})`)
      }
      if (f.at > s.duration) throw new ScenarioError(`${source}: faults[${i}].at: ${f.at} s is after the end of the run (${s.duration} s)`)
    }
    const kinds = [...s.faults.map((f, i) => ({ kind: f.kind, where: `faults[${i}].kind` })), ...(s.random_faults?.kinds ?? []).map((kind, i) => ({ kind, where: `random_faults.kinds[${i}]` }))]
    for (const { kind, where } of kinds) {
      if (s.cluster === undefined && CLUSTER_FAULTS.has(kind)) throw new ScenarioError(`${source}: ${where}: ${kind} needs a cluster block (the sequencer pair)`)
      if (s.cluster !== undefined && kind === "crash") throw new ScenarioError(`${source}: ${where}: crash is the single process's; with a cluster block use leader_crash`)
    }
    if (s.cluster !== undefined && s.storage !== undefined) throw new ScenarioError(`${source}: cluster and storage exclude each other (a sequencer's journal is the replicated log)`)
    return s
  }
  const lines = readableIssues(ParseResult.ArrayFormatter.formatErrorSync(result.left)).map((i) => `  ${i.path || "(root)"}: ${i.message}`)
  throw new ScenarioError(`${source} is not a valid scenario:\n${lines.join("\n")}`)
}

/** The offset of the first JSON syntax error in text (null if none found): a small recursive-descent scan. */
const jsonErrorOffset = (text: string): number | null => {
  let i = 0
  const ws = (): void => {
    while (i < text.length && " \t\r\n".includes(text[i]!)) i++
  }
  const fail = (): never => {
    throw i
  }
  const str = (): void => {
    if (text[i] !== '"') fail()
    i++
    while (i < text.length && text[i] !== '"') {
      if (text[i] === "\\") i++
      else if (text.charCodeAt(i) < 0x20) fail()
      i++
    }
    if (i >= text.length) fail()
    i++
  }
  const value = (): void => {
    ws()
    const c = text[i]
    if (c === "{") {
      i++
      ws()
      if (text[i] === "}") return void i++
      for (;;) {
        ws()
        str()
        ws()
        if (text[i] !== ":") fail()
        i++
        value()
        ws()
        if (text[i] === ",") i++
        else if (text[i] === "}") return void i++
        else fail()
      }
    } else if (c === "[") {
      i++
      ws()
      if (text[i] === "]") return void i++
      for (;;) {
        value()
        ws()
        if (text[i] === ",") i++
        else if (text[i] === "]") return void i++
        else fail()
      }
    } else if (c === '"') str()
    else {
      const lit = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(i, i + 64))
      if (lit === null) fail()
      i += lit![0].length
    }
  }
  try {
    value()
    ws()
    return i < text.length ? i : null
  } catch (at) {
    return typeof at === "number" ? Math.min(at, text.length) : null
  }
}

/** "file is not valid JSON at line L, column C: ..." from JSON.parse's "at position N" (1-based line and column), with the line shown. */
export const jsonSyntaxError = (path: string, text: string, message: string): string => {
  const m = /at position (\d+)/.exec(message)
  // V8 gives no position for some errors ("Unexpected token ']', ... is not valid JSON"): find it by scanning.
  const pos = m !== null ? Number(m[1]) : jsonErrorOffset(text)
  const bare = m !== null ? message.replace(/ in JSON at position \d+.*$/, "") : message.replace(/, (?:\.\.\.)?".*$/s, "")
  if (pos === null) return `${path} is not valid JSON: ${message}`
  const before = text.slice(0, pos)
  const line = before.split("\n").length
  const col = pos - before.lastIndexOf("\n")
  const src = text.split("\n")[line - 1] ?? ""
  return `${path} is not valid JSON at line ${line}, column ${col}: ${bare}\n  ${src}\n  ${" ".repeat(Math.max(0, col - 1))}^`
}

export const loadScenario = (path: string): Scenario => {
  let text: string
  try {
    text = readFileSync(path, "utf8")
  } catch (err) {
    throw new ScenarioError(`cannot read ${path}: ${(err as Error).message}`)
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (err) {
    throw new ScenarioError(jsonSyntaxError(path, text, (err as Error).message))
  }
  return decodeScenario(value, path)
}
