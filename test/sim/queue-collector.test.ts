// The caller's exactly-once bookkeeping for sweeps on the work queue (sim/queue/collector.ts),
// without a network: results arrive in parts, per run (`<worker>/<delivery>`), possibly twice for
// one job (a worker that stalled past ack_wait, or died between storing and acknowledging). The
// first complete result is kept and its files written once; a later equal one is counted and
// dropped; a later different one is a named conflict; JetStream giving a job up is its error.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { type JobOutcome, ResultCollector } from "../../sim/queue/collector.ts"
import type { QueueProgress, QueueState } from "../../sim/queue/progress.ts"
import { encode, type JobOutput, MAX_DELIVER } from "../../sim/queue/protocol.ts"

const recorder = (): QueueProgress & { notes: string[]; states: QueueState[] } => {
  const notes: string[] = []
  const states: QueueState[] = []
  return { notes, states, update: (s) => void states.push(s), note: (l) => void notes.push(l), clear: () => undefined, done: () => undefined }
}

/** One run's result split in two parts, as a worker publishes a large one. */
const halves = (output: JobOutput): [Uint8Array, Uint8Array] => {
  const bytes = encode(output)
  const mid = Math.floor(bytes.length / 2)
  return [bytes.subarray(0, mid), bytes.subarray(mid)]
}

const setup = (outputs: ReadonlyArray<ReadonlyArray<string>>) => {
  const progress = recorder()
  const settled: Array<[number, JobOutcome]> = []
  let allDone = 0
  const jobs = outputs.map((o, i) => ({ label: `job ${i}`, outputs: o }))
  const c = new ResultCollector(jobs, progress, (i, o) => void settled.push([i, o]), () => void allDone++)
  return { c, progress, settled, allDone: () => allDone }
}

describe("the queue's result collector", () => {
  it("keeps the first complete result of a job once, writes its file once, and drops an equal second run", () => {
    const dir = mkdtempSync(join(tmpdir(), "queue-collector-"))
    const log = join(dir, "seed1.log")
    const { c, progress, settled, allDone } = setup([[log], []])
    const first: JobOutput = { value: { seed: 1, n: 1 }, files: ["log of seed 1\n"], digest: "d1" }
    const [a1, a2] = halves(first)
    const [b1, b2] = halves({ ...first, value: { seed: 1, n: 1, wallMs: 99 } })
    // Two runs of job 0 interleave their parts; the first to complete wins.
    c.part(0, "w1/1", "w1", 0, 2, a1)
    c.part(0, "w2/2", "w2", 0, 2, b1)
    c.part(0, "w2/2", "w2", 1, 2, b2)
    expect(settled).toEqual([[0, { ok: true, value: { seed: 1, n: 1, wallMs: 99 } }]])
    expect(readFileSync(log, "utf8")).toBe("log of seed 1\n")
    // The caller's file is not written again by the late run.
    writeFileSync(log, "kept")
    c.part(0, "w1/1", "w1", 1, 2, a2)
    expect(readFileSync(log, "utf8")).toBe("kept")
    expect(settled).toHaveLength(1)
    expect(c.duplicates).toBe(1)
    expect(c.conflicts).toEqual([])
    expect(progress.notes.some((n) => /job 0 ran twice \(also on w1\); the same result, kept once/.test(n))).toBe(true)
    expect(allDone()).toBe(0)
    c.part(1, "w1/1", "w1", 0, 1, encode({ value: "two", files: [], digest: "d2" } satisfies JobOutput))
    expect(settled.map(([i]) => i)).toEqual([0, 1])
    expect(allDone()).toBe(1)
    expect(c.outcomes).toEqual([{ ok: true, value: { seed: 1, n: 1, wallMs: 99 } }, { ok: true, value: "two" }])
    expect([...c.workers].sort()).toEqual(["w1", "w2"])
    expect(progress.states.at(-1)).toEqual({ done: 2, total: 2, running: 0, workers: 2 })
  })

  it("a second run with another digest is a conflict naming both workers; the first result stays", () => {
    const { c, settled } = setup([[]])
    c.part(0, "w1/1", "w1", 0, 1, encode({ value: "a", files: [], digest: "aaaa" } satisfies JobOutput))
    c.part(0, "w2/2", "w2", 0, 1, encode({ value: "b", files: [], digest: "bbbb" } satisfies JobOutput))
    expect(settled).toEqual([[0, { ok: true, value: "a" }]])
    expect(c.conflicts).toHaveLength(1)
    expect(c.conflicts[0]).toMatch(/^job 0: two runs disagree \(w1: aaaa, w2: bbbb\)/)
  })

  it("a job JetStream gave up is settled with that error once; a result after it is not a second outcome", () => {
    const { c, settled, allDone } = setup([[]])
    c.started(0, "w1")
    c.gaveUp(0, MAX_DELIVER)
    c.gaveUp(0, MAX_DELIVER)
    c.part(0, "w3/4", "w3", 0, 1, encode({ value: "late", files: [], digest: "x" } satisfies JobOutput))
    expect(settled).toHaveLength(1)
    expect(settled[0]![1]).toEqual({ ok: false, error: expect.stringMatching(new RegExp(`^delivered ${MAX_DELIVER} times \\(max_deliver ${MAX_DELIVER}\\) and no worker finished it`)) })
    expect(allDone()).toBe(1)
  })

  it("ignores parts for jobs it does not have and malformed part numbers", () => {
    const { c, settled } = setup([[]])
    const ok = encode({ value: 1, files: [], digest: "d" } satisfies JobOutput)
    c.part(1, "w/1", "w", 0, 1, ok)
    c.part(-1, "w/1", "w", 0, 1, ok)
    c.part(0, "w/1", "w", 1, 1, ok)
    c.part(0, "w/1", "w", 0, 0, ok)
    expect(settled).toEqual([])
    c.part(0, "w/1", "w", 0, 1, ok)
    expect(settled).toEqual([[0, { ok: true, value: 1 }]])
  })
})
