// The scenario file format (docs/simulation.md): JSON, checked with Effect Schema.
// A bad file fails with every problem listed as `path.to.field: what is wrong`.
import { Either, ParseResult, Schema } from "effect"
import { readFileSync } from "node:fs"

const UNIT_SEC: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86_400 }

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
})

const Int = (min: number, max: number) => Schema.Int.pipe(Schema.between(min, max))
const Pct = Schema.Number.pipe(Schema.between(0, 100))
const Usdc = Schema.Number.pipe(Schema.between(0, 1_000_000_000))

const AgentCommon = {
  count: Int(1, 100_000),
  /** USDG each agent deposits through the chain at start. */
  deposit_usdc: Schema.optionalWith(Usdc, { default: () => 1_000 }),
  /** Mean time between the agent's actions (exponential inter-arrival). */
  interval: Schema.optionalWith(Duration, { default: () => 60 }),
  /** Chance per action of withdrawing part of the balance instead of trading. */
  withdraw_pct: Schema.optionalWith(Pct, { default: () => 0 }),
  /** Subscribes to its portfolio channel and checks frames against its own view. */
  websocket: Schema.optionalWith(Schema.Boolean, { default: () => true })
}

const Noise = Schema.Struct({ kind: Schema.Literal("noise"), ...AgentCommon, max_size: Schema.optionalWith(Int(1, 1_000_000), { default: () => 50 }) })
const Informed = Schema.Struct({
  kind: Schema.Literal("informed"),
  ...AgentCommon,
  max_size: Schema.optionalWith(Int(1, 1_000_000), { default: () => 100 }),
  /** Trades only when the book is mispriced by more than this against the hidden true probability. */
  edge_bps: Schema.optionalWith(Int(0, 5_000), { default: () => 200 })
})
const MarketMaker = Schema.Struct({
  kind: Schema.Literal("market_maker"),
  ...AgentCommon,
  spread_bps: Schema.optionalWith(Int(2, 5_000), { default: () => 200 }),
  size: Schema.optionalWith(Int(1, 1_000_000), { default: () => 100 }),
  levels: Schema.optionalWith(Int(1, 10), { default: () => 2 }),
  markets_per_agent: Schema.optionalWith(Int(1, 500), { default: () => 5 })
})
const LpCommon = {
  ...AgentCommon,
  preset: Schema.optionalWith(Schema.Literal("conservative", "balanced", "aggressive"), { default: () => "balanced" as const }),
  /** Capital the strategy sizes its quotes from (at most the deposit). */
  capital_usdc: Schema.optionalWith(Usdc, { default: () => 1_000 }),
  markets_per_agent: Schema.optionalWith(Int(1, 20), { default: () => 2 })
}
/** Runs the src/lp strategy client-side and quotes over the API. */
const LpStrategy = Schema.Struct({ kind: Schema.Literal("lp_strategy"), ...LpCommon })
/** Delegates a session key to the server-managed LP bot (/v1/lp-bot/*). */
const LpBot = Schema.Struct({ kind: Schema.Literal("lp_bot"), ...LpCommon })
const Careless = Schema.Struct({
  kind: Schema.Literal("careless"),
  ...AgentCommon,
  /** Kinds of bad input to send; all by default. */
  mistakes: Schema.optionalWith(Schema.Array(Schema.Literal("stale_timestamp", "reused_nonce", "malformed_body", "wrong_signature", "bad_price", "unknown_market", "overspend", "no_session")), {
    default: () => ["stale_timestamp", "reused_nonce", "malformed_body", "wrong_signature", "bad_price", "unknown_market", "overspend", "no_session"] as const
  })
})
const Spammer = Schema.Struct({
  kind: Schema.Literal("spammer"),
  ...AgentCommon,
  /** Requests in one burst; bursts follow `interval`. */
  burst: Schema.optionalWith(Int(1, 10_000), { default: () => 200 }),
  /** How many spammers share one IP (per-IP limits). */
  share_ip: Schema.optionalWith(Schema.Boolean, { default: () => true })
})
export const AgentSpec = Schema.Union(Noise, Informed, MarketMaker, LpStrategy, LpBot, Careless, Spammer)
export type AgentSpec = typeof AgentSpec.Type

const Window = { at: Duration, duration: Schema.optionalWith(Duration, { default: () => 0 }) }
const FaultSpec = Schema.Union(
  Schema.Struct({ kind: Schema.Literal("trading_pause"), ...Window }),
  Schema.Struct({ kind: Schema.Literal("engine_unreachable"), ...Window }),
  Schema.Struct({ kind: Schema.Literal("market_halt"), ...Window, market: Int(0, 10_000) }),
  Schema.Struct({
    kind: Schema.Literal("market_resolve"),
    at: Duration,
    market: Int(0, 10_000),
    /** `truth`: the outcome the hidden probability path ends nearer to. */
    winner: Schema.optionalWith(Schema.Literal("yes", "no", "truth"), { default: () => "truth" as const })
  }),
  Schema.Struct({
    kind: Schema.Literal("rpc_errors"),
    ...Window,
    rate_pct: Pct,
    methods: Schema.optionalWith(Schema.Array(Schema.Literal("head", "blockHash", "transfersTo", "sweep", "payout", "receipt", "balanceOf")), {
      default: () => ["head", "transfersTo", "sweep", "payout", "receipt"] as const
    })
  }),
  Schema.Struct({ kind: Schema.Literal("reorg"), at: Duration, depth: Int(1, 64) }),
  Schema.Struct({ kind: Schema.Literal("ws_disconnect"), at: Duration, fraction_pct: Schema.optionalWith(Pct, { default: () => 100 }) }),
  Schema.Struct({ kind: Schema.Literal("crash"), at: Duration, down: Schema.optionalWith(Duration, { default: () => 5 }) }),
  Schema.Struct({ kind: Schema.Literal("network"), ...Window, latency_ms: Schema.optional(Schema.Tuple(Int(0, 60_000), Int(0, 60_000))), drop_pct: Schema.optional(Pct) }),
  // The sequencer pair's faults (a `cluster` block): sim/cluster-world.ts.
  /** The leader is killed; a new process starts in its slot as a standby `down` later. */
  Schema.Struct({ kind: Schema.Literal("leader_crash"), at: Duration, down: Schema.optionalWith(Duration, { default: () => 5 }) }),
  /**
   * The leader is paused at its next append (that append unsent) for `pause`, then resumed: a zombie.
   * `until_takeover`: resumed instead 0–12 ms after another process acquires the lease (`pause` the
   * cap), so its held append races the new leader's catch-up and term marker.
   */
  Schema.Struct({
    kind: Schema.Literal("zombie"),
    at: Duration,
    pause: Schema.optionalWith(Duration, { default: () => 10 }),
    until_takeover: Schema.optionalWith(Schema.Boolean, { default: () => false })
  }),
  /** The leader's lease renewals are lost or delayed for `duration`: its lease lapses while it runs. */
  Schema.Struct({ kind: Schema.Literal("lease_expiry"), at: Duration, duration: Schema.optionalWith(Duration, { default: () => 10 }) }),
  /** The log is unavailable for `duration`: appends fail (time out); `land_pct` % of those reaching it commit when it is back. */
  Schema.Struct({ kind: Schema.Literal("log_unavailable"), at: Duration, duration: Schema.optionalWith(Duration, { default: () => 5 }), land_pct: Schema.optionalWith(Pct, { default: () => 50 }) })
)

/** Fault kinds that need a `cluster` block. */
export const CLUSTER_FAULTS: ReadonlySet<string> = new Set(["leader_crash", "zombie", "lease_expiry", "log_unavailable"])
export type FaultSpec = typeof FaultSpec.Type

/** Random faults: a kind drawn at exponential intervals with the given mean. */
const RandomFaults = Schema.Struct({
  every: Duration,
  kinds: Schema.Array(Schema.Literal("trading_pause", "engine_unreachable", "rpc_errors", "reorg", "ws_disconnect", "crash", "leader_crash", "zombie", "lease_expiry", "log_unavailable")),
  duration: Schema.optionalWith(Duration, { default: () => 60 })
})

export const Scenario = Schema.Struct({
  name: Schema.String.pipe(Schema.minLength(1)),
  description: Schema.optionalWith(Schema.String, { default: () => "" }),
  seed: Schema.optionalWith(Schema.Int, { default: () => 1 }),
  duration: Duration,
  /** Unix seconds at which virtual time starts (default 2026-01-01T00:00:00Z). */
  start_time: Schema.optionalWith(Schema.Int, { default: () => 1_767_225_600 }),
  markets: Schema.Struct({
    count: Int(1, 1_000),
    /** Hidden true probability at start: uniform in [lo, hi] bps. */
    initial_bps: Schema.optionalWith(Schema.Tuple(Int(100, 9_900), Int(100, 9_900)), { default: () => [2_000, 8_000] as const }),
    /** Volatility of the hidden probability (logit units per √hour). */
    volatility: Schema.optionalWith(Schema.Number.pipe(Schema.between(0, 10)), { default: () => 0.1 }),
    /**
     * Jumps of the hidden probability on top of the walk (news): at each minute's step one
     * happens with probability per_hour / 60, of size × a standard normal in logit units.
     */
    jumps: Schema.optional(
      Schema.Struct({
        per_hour: Schema.Number.pipe(Schema.between(0, 60)),
        size: Schema.Number.pipe(Schema.between(0, 10))
      })
    )
  }),
  /**
   * The fee schedule set by the operator before trading starts (POST /v1/admin/fees), for every
   * market: the engine pays maker rebates only out of taker fees collected. Takers price the fee
   * in (sim/agents/traders.ts). Absent: the engine's defaults (taker fee 0, maker rebate 5 bps).
   */
  fees: Schema.optional(
    Schema.Struct({
      taker_fee_bps: Int(0, 1_000),
      maker_rebate_bps: Schema.optional(Int(0, 1_000))
    })
  ),
  agents: Schema.Array(AgentSpec).pipe(Schema.minItems(1)),
  network: Schema.optionalWith(
    Schema.Struct({
      latency_ms: Schema.optionalWith(Schema.Tuple(Int(0, 60_000), Int(0, 60_000)), { default: () => [1, 20] as const }),
      drop_pct: Schema.optionalWith(Pct, { default: () => 0 }),
      response_drop_pct: Schema.optionalWith(Pct, { default: () => 0 }),
      timeout: Schema.optionalWith(Duration, { default: () => 5 })
    }),
    { default: () => ({ latency_ms: [1, 20] as const, drop_pct: 0, response_drop_pct: 0, timeout: 5 }) }
  ),
  chain: Schema.optionalWith(
    Schema.Struct({
      block_time: Schema.optionalWith(Duration, { default: () => 2 }),
      confirmations: Schema.optionalWith(Int(0, 64), { default: () => 2 }),
      poll: Schema.optionalWith(Duration, { default: () => 2 })
    }),
    { default: () => ({ block_time: 2, confirmations: 2, poll: 2 }) }
  ),
  faults: Schema.optionalWith(Schema.Array(FaultSpec), { default: () => [] }),
  /**
   * Storage faults: the real journal, snapshots and recovery on a simulated disk (docs/durability.md).
   * Rates are per write, per fdatasync, per crash and per snapshot; a write or fdatasync error
   * fail-stops the process and the supervisor restarts it `restart_after` later.
   */
  storage: Schema.optional(
    Schema.Struct({
      short_write_pct: Schema.optionalWith(Pct, { default: () => 0 }),
      enospc_pct: Schema.optionalWith(Pct, { default: () => 0 }),
      sync_eio_pct: Schema.optionalWith(Pct, { default: () => 0 }),
      torn_tail_pct: Schema.optionalWith(Pct, { default: () => 50 }),
      snapshot_flip_pct: Schema.optionalWith(Pct, { default: () => 0 }),
      snapshot_every: Schema.optionalWith(Duration, { default: () => 60 }),
      restart_after: Schema.optionalWith(Duration, { default: () => 2 })
    })
  ),
  random_faults: Schema.optional(RandomFaults),
  /**
   * The sequencer pair (docs/simulation.md "Failover"): two processes running the sequencer role on
   * a simulated replicated log (JetStream R3, synced: nothing acknowledged is lost) and lease, behind
   * a load balancer. Latencies are one way, in ms; a request unanswered in `request_timeout` fails.
   */
  cluster: Schema.optional(
    Schema.Struct({
      lease_ttl: Schema.optionalWith(Duration, { default: () => 3 }),
      restart_after: Schema.optionalWith(Duration, { default: () => 2 }),
      log_latency_ms: Schema.optionalWith(Schema.Tuple(Int(0, 60_000), Int(0, 60_000)), { default: () => [1, 4] as const }),
      lease_latency_ms: Schema.optionalWith(Schema.Tuple(Int(0, 60_000), Int(0, 60_000)), { default: () => [1, 4] as const }),
      request_timeout: Schema.optionalWith(Duration, { default: () => 2 }),
      /** The load balancer's readiness probe period. */
      probe_every: Schema.optionalWith(Duration, { default: () => 1 })
    })
  ),
  /**
   * Wall-clock steps (docs/time.md): the service's wall clock jumps by `by` seconds (negative:
   * back) while its monotonic clock runs on; `random` draws steps from the seed, each undone
   * `revert_after` later.
   */
  clock: Schema.optional(
    Schema.Struct({
      steps: Schema.optionalWith(Schema.Array(Schema.Struct({ at: Duration, by: Schema.Int.pipe(Schema.between(-30 * 86_400, 30 * 86_400)) })), { default: () => [] }),
      random: Schema.optional(
        Schema.Struct({
          every: Duration,
          max_back: Schema.optionalWith(Duration, { default: () => 120 }),
          max_forward: Schema.optionalWith(Duration, { default: () => 3_600 }),
          revert_after: Schema.optionalWith(Duration, { default: () => 60 })
        })
      )
    })
  ),
  /** How often the auditor checks the whole state (plus once at the end). */
  audit: Schema.optionalWith(Schema.Struct({ every: Schema.optionalWith(Duration, { default: () => 10 }) }), { default: () => ({ every: 10 }) }),
  expect: Schema.optionalWith(
    Schema.Struct({
      min_fills: Schema.optional(Schema.Int),
      min_volume_usdc: Schema.optional(Schema.Number),
      min_deposits_credited: Schema.optional(Schema.Int),
      min_withdrawals_confirmed: Schema.optional(Schema.Int),
      min_orders_queued: Schema.optional(Schema.Int),
      min_redeemed_markets: Schema.optional(Schema.Int),
      min_lp_bots_started: Schema.optional(Schema.Int),
      /** LP rewards paid (micro-USDC) by the daily payout. */
      min_rewards_paid_micro: Schema.optional(Schema.Int),
      /** e.g. { "429": 10 }: at least that many responses with the status. */
      min_status: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Int })),
      /** 5xx responses allowed (default 0; engine_unreachable's 502 is counted separately). */
      max_5xx: Schema.optionalWith(Schema.Int, { default: () => 0 }),
      /** Error codes that must appear at least once. */
      error_codes: Schema.optional(Schema.Array(Schema.String))
    }),
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
