// The scenario format: shipped files decode; a bad file names each bad field.
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { decodeScenario, loadScenario, ScenarioError } from "../../sim/scenario/scenario.ts"
import { shippedScenarios } from "./support.ts"

const minimal = { name: "t", duration: "1h", markets: { count: 2 }, agents: [{ kind: "noise", count: 3 }] }

const errorOf = (value: unknown): string => {
  try {
    decodeScenario(value, "t.json")
  } catch (err) {
    expect(err).toBeInstanceOf(ScenarioError)
    return (err as Error).message
  }
  throw new Error("expected the scenario to be rejected")
}

describe("scenario files", () => {
  it("every shipped scenario decodes and describes itself", () => {
    for (const { scenario } of shippedScenarios()) {
      expect(scenario.description.length).toBeGreaterThan(20)
      expect(scenario.duration).toBeGreaterThan(0)
    }
  })

  it("fills defaults and parses durations", () => {
    const s = decodeScenario({ ...minimal, faults: [{ kind: "trading_pause", at: "90s", duration: "15m" }] })
    expect(s.duration).toBe(3_600)
    expect(s.seed).toBe(1)
    expect(s.faults[0]).toEqual({ kind: "trading_pause", at: 90, duration: 900 })
    expect(s.agents[0]).toMatchObject({ kind: "noise", count: 3, deposit_usdc: 1_000, interval: 60, withdraw_pct: 0, websocket: true, max_size: 50 })
    expect(s.network).toEqual({ latency_ms: [1, 20], drop_pct: 0, response_drop_pct: 0, timeout: 5 })
  })

  it.each([
    { name: "a bad duration", patch: { duration: "soon" }, field: "duration" },
    { name: "an unknown agent kind", patch: { agents: [{ kind: "whale", count: 1 }] }, field: "agents[0].kind" },
    { name: "a non-integer count", patch: { agents: [{ kind: "noise", count: 1.5 }] }, field: "agents[0].count" },
    { name: "too many markets", patch: { markets: { count: 5000 } }, field: "markets.count" },
    { name: "an unknown field", patch: { colour: "blue" }, field: "colour" },
    { name: "a bad fault", patch: { faults: [{ kind: "reorg", at: "1m", depth: 0 }] }, field: "faults[0].depth" },
    { name: "a percentage above 100", patch: { network: { drop_pct: 150 } }, field: "network.drop_pct" }
  ])("rejects $name, naming $field", ({ patch, field }) => {
    expect(errorOf({ ...minimal, ...patch })).toContain(`${field}:`)
  })

  it("lists every problem at once", () => {
    const message = errorOf({ name: "", duration: -1, markets: {}, agents: [] })
    for (const field of ["name:", "duration:", "markets.count:", "agents:"]) expect(message).toContain(field)
  })

  it("names only the field at fault: no \"Expected undefined\" for the optional block around it (issue 34 item 14)", () => {
    expect(errorOf({ ...minimal, faults: [{ kind: "rpc_errors", at: "1m" }] })).toBe("t.json is not a valid scenario:\n  faults[0].rate_pct: is missing")
    expect(errorOf({ ...minimal, clock: { steps: [{ at: "1m" }] } })).toBe("t.json is not a valid scenario:\n  clock.steps[0].by: is missing")
    expect(errorOf({ ...minimal, faults: { kind: "crash", at: 1 } })).toBe('t.json is not a valid scenario:\n  faults: Expected an array, actual {"kind":"crash","at":1}')
    // Two problems in two places: both, and nothing else.
    expect(errorOf({ ...minimal, faults: [{ kind: "crash", at: 1, bogus: 1 }], network: { drop_pct: 150 } }).split("\n").slice(1)).toEqual([
      '  network.drop_pct: Expected a number between 0 and 100, actual 150',
      '  faults[0].bogus: is unexpected, expected: "kind" | "at" | "down"'
    ])
  })

  it("checks faults against the run: market index and time", () => {
    expect(errorOf({ ...minimal, faults: [{ kind: "market_halt", at: "1m", market: 2 }] })).toMatch(/faults\[0\]\.market: 2 is out of range/)
    expect(errorOf({ ...minimal, faults: [{ kind: "crash", at: "2h" }] })).toMatch(/faults\[0\]\.at: .*after the end/)
  })

  it("reports unreadable and non-JSON files with their path", () => {
    const dir = mkdtempSync(join(tmpdir(), "scn-"))
    const bad = join(dir, "bad.json")
    writeFileSync(bad, "{ nope")
    expect(() => loadScenario(bad)).toThrow(/bad\.json is not valid JSON/)
    expect(() => loadScenario(join(dir, "missing.json"))).toThrow(/cannot read .*missing\.json/)
  })

  it("a cluster block: defaults; its fault kinds need it; the single process's crash and storage faults exclude it", () => {
    const c = decodeScenario({ ...minimal, cluster: {}, faults: [{ kind: "zombie", at: "5m" }, { kind: "log_unavailable", at: "6m" }] })
    expect(c.cluster).toEqual({ lease_ttl: 3, restart_after: 2, log_latency_ms: [1, 4], lease_latency_ms: [1, 4], request_timeout: 2, probe_every: 1 })
    expect(c.faults).toEqual([{ kind: "zombie", at: 300, pause: 10, until_takeover: false }, { kind: "log_unavailable", at: 360, duration: 5, land_pct: 50 }])
    expect(errorOf({ ...minimal, faults: [{ kind: "leader_crash", at: "5m" }] })).toBe("t.json: faults[0].kind: leader_crash needs a cluster block (the sequencer pair)")
    expect(errorOf({ ...minimal, random_faults: { every: "5m", kinds: ["reorg", "lease_expiry"] } })).toBe("t.json: random_faults.kinds[1]: lease_expiry needs a cluster block (the sequencer pair)")
    expect(errorOf({ ...minimal, cluster: {}, faults: [{ kind: "crash", at: "5m" }] })).toBe("t.json: faults[0].kind: crash is the single process's; with a cluster block use leader_crash")
    expect(errorOf({ ...minimal, cluster: {}, storage: {} })).toBe("t.json: cluster and storage exclude each other (a sequencer's journal is the replicated log)")
    expect(errorOf({ ...minimal, cluster: { lease_ttl: "soon" } })).toMatch(/cluster\.lease_ttl: expected a duration/)
  })
})
