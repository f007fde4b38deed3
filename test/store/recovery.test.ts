// Recovery from DATA_DIR: newest valid snapshot + journal replay gives the state
// hash of the process that wrote them; torn and corrupt tails are cut to the last
// whole record and reported; missing or damaged snapshots fall back to older ones.
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { basename, join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { demoCatalog } from "../../fixtures/catalog.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import { exchangeHash } from "../../src/service/exchange-snapshot.ts"
import type { ServiceCommand } from "../../src/service/commands.ts"
import { type DurableExchange, describeRecovery, journalDir, openDurableExchange, recoverExchange, snapshotDir } from "../../src/store/durable.ts"
import { listSegments } from "../../src/store/file-journal.ts"

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})
const freshDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), "twinbook-recovery-"))
  dirs.push(d)
  return d
}
const clock = { ms: 1_795_305_600_000 }
const open = (dir: string) => openDurableExchange(dir, () => clock.ms, { onFatal: (e) => { throw e } })

const users = ["r-alice", "r-bob", "r-carol"].map((l) => keyFromLabel(l).user)

/** A deterministic burst of activity: catalogue, deposits, resting and crossing orders, cancels. */
const activity = (d: DurableExchange, rounds: number, nonceBase: number): Promise<void[]> => {
  const x = d.exchange
  const out: Promise<void>[] = []
  const submit = (cmd: ServiceCommand) => out.push(x.submit(cmd).durable)
  if (x.catalog.events.length === 0) for (const event of demoCatalog().slice(0, 3)) submit({ type: "create_event", event })
  const market = x.catalog.events[0]!.outcomes[0]!.market_id
  for (const user of users) submit({ type: "credit", user, amountMicro: 50_000_000, ref: `dep-${user}-${nonceBase}` })
  for (let i = 0; i < rounds; i++) {
    const user = users[i % users.length]!
    clock.ms += 700
    submit({
      type: "place_order",
      order: { user, marketId: market, side: "buy", outcome: i % 2 === 0 ? "yes" : "no", priceBps: 4_700 + ((i * 37) % 600), size: 1 + (i % 5), orderType: "gtc", nonce: nonceBase + i }
    })
    if (i % 7 === 6) submit({ type: "cancel_all", user })
  }
  return Promise.all(out)
}

describe("recovery from DATA_DIR", () => {
  it("restarts to the same state hash after a clean close (snapshot) and after a drop without one", async () => {
    const dir = freshDir()
    const a = await open(dir)
    await activity(a, 120, 1)
    await a.snapshot()
    await activity(a, 80, 1_000)
    const hash = exchangeHash(a.exchange)
    const trades = a.exchange.history.marketTrades(a.exchange.catalog.events[0]!.outcomes[0]!.market_id, 500).total
    expect(trades).toBeGreaterThan(10)
    await a.journal.sync()
    // No close, no final snapshot: the process "vanishes" after its last durable record.
    const b = await open(dir)
    expect(b.recovery).toMatchObject({ tornTail: null, replayed: expect.any(Number) })
    expect(b.recovery.snapshotSeq).not.toBeNull()
    expect(exchangeHash(b.exchange)).toBe(hash)
    await b.snapshot()
    await b.close()
    const c = await open(dir)
    expect(c.recovery.replayed).toBe(0)
    expect(exchangeHash(c.exchange)).toBe(hash)
    await c.close()
  })

  it("cuts a torn tail (half a record) and a corrupt last record back to the last whole record", async () => {
    for (const damage of ["torn", "flipped"] as const) {
      const dir = freshDir()
      const a = await open(dir)
      await activity(a, 30, 1)
      await activity(a, 1, 500) // its credits and order are the tail we damage
      await a.close()
      const seg = listSegments(journalDir(dir)).at(-1)!.path
      const size = statSync(seg).size
      if (damage === "torn") writeFileSync(seg, readFileSync(seg).subarray(0, size - 5))
      else {
        const buf = readFileSync(seg)
        buf[size - 3] = buf[size - 3]! ^ 0xff
        writeFileSync(seg, buf)
      }
      const b = await open(dir)
      expect(b.recovery.tornTail?.problem).toMatch(damage === "torn" ? /torn record/ : /checksum mismatch/)
      // Only the damaged last record is lost; the four records before it (3 credits, 1 order) remain.
      expect(b.exchange.lastSeq).toBe(a.exchange.lastSeq - 1)
      await b.close()
      // Cut exactly there (the reserve the open journal wrote after it is cut again on close).
      expect(statSync(seg).size).toBe((damage === "torn" ? size - 5 : size) - b.recovery.tornTail!.droppedBytes)
      // Garbage after the truncation point is gone for good: a second start finds a clean journal.
      const c = await open(dir)
      expect(c.recovery.tornTail).toBeNull()
      expect(c.exchange.lastSeq).toBe(a.exchange.lastSeq - 1)
      // And the journal continues from there.
      await activity(c, 3, 900)
      await c.close()
      expect((await open(dir)).exchange.lastSeq).toBe(c.exchange.lastSeq)
    }
  })

  it("recovers from the previous snapshot when the newest is missing, and skips a damaged one", async () => {
    const dir = freshDir()
    const a = await open(dir)
    await activity(a, 40, 1)
    await a.snapshot()
    await activity(a, 40, 100)
    const { path: newest } = await a.snapshot()
    await activity(a, 10, 200)
    await a.journal.sync()
    const hash = exchangeHash(a.exchange)

    rmSync(newest)
    const b = await open(dir)
    expect(b.recovery.snapshotSeq).toBeLessThan(a.exchange.lastSeq - 10)
    expect(exchangeHash(b.exchange)).toBe(hash)
    await b.snapshot()
    await b.close()

    // Damage the newest snapshot's body: its checksum fails, the older one is used.
    const names = readdirSync(snapshotDir(dir)).sort()
    const damaged = join(snapshotDir(dir), names.at(-1)!)
    // Still valid JSON, but not what was checksummed.
    writeFileSync(damaged, readFileSync(damaged, "utf8").replace("active", "halted"))
    const c = await open(dir)
    expect(c.recovery.skippedSnapshots).toEqual([{ path: damaged, reason: "checksum mismatch", movedTo: join(snapshotDir(dir), "damaged", names.at(-1)!) }])
    expect(exchangeHash(c.exchange)).toBe(hash)
    await c.close()

    // No snapshot at all: the whole journal replays to the same state.
    rmSync(snapshotDir(dir), { recursive: true })
    const d = await open(dir)
    expect(d.recovery.snapshotSeq).toBeNull()
    expect(exchangeHash(d.exchange)).toBe(hash)
    await d.close()
  })

  it("says what it did when every snapshot is damaged: one line per skip and why, a full replay, the files moved aside and never pruned", async () => {
    const dir = freshDir()
    const a = await open(dir)
    await activity(a, 30, 1)
    const first = await a.snapshot()
    await activity(a, 30, 100)
    const second = await a.snapshot()
    await activity(a, 5, 200)
    await a.journal.sync()
    const hash = exchangeHash(a.exchange)
    const lastSeq = a.exchange.lastSeq
    // The older one flipped in its body (checksum), the newer one cut short (not even JSON).
    writeFileSync(first.path, readFileSync(first.path, "utf8").replace("active", "halted"))
    writeFileSync(second.path, readFileSync(second.path).subarray(0, 100))
    const b = await open(dir)
    const damaged = join(snapshotDir(dir), "damaged")
    expect(b.recovery.snapshotSeq).toBeNull()
    expect(b.recovery.replayed).toBe(lastSeq)
    expect(b.recovery.skippedSnapshots).toEqual([
      { path: second.path, reason: "not a snapshot file (unparseable JSON)", movedTo: join(damaged, basename(second.path)) },
      { path: first.path, reason: "checksum mismatch", movedTo: join(damaged, basename(first.path)) }
    ])
    expect(exchangeHash(b.exchange)).toBe(hash)
    const lines = describeRecovery(b.recovery)
    expect(lines).toEqual([
      `snapshot skipped  ${second.path}: not a snapshot file (unparseable JSON); moved to ${join(damaged, basename(second.path))}`,
      `snapshot skipped  ${first.path}: checksum mismatch; moved to ${join(damaged, basename(first.path))}`,
      `recovery          no usable snapshot (2 skipped): full replay of the journal from seq 1 (${lastSeq} records)`
    ])
    // Four new snapshots with keep = 3: pruning removes a good one, never the damaged ones.
    for (let i = 0; i < 4; i++) {
      await activity(b, 3, 300 + 10 * i)
      await b.snapshot()
    }
    expect(readdirSync(snapshotDir(dir)).filter((n) => n.startsWith("snap-"))).toHaveLength(3)
    expect(readdirSync(damaged).sort()).toEqual([basename(first.path), basename(second.path)])
    await b.close()
    // A read-only recovery (repair: false) reports a damaged snapshot but leaves it where it is.
    const newest = readdirSync(snapshotDir(dir)).filter((n) => n.startsWith("snap-")).sort().at(-1)!
    writeFileSync(join(snapshotDir(dir), newest), "{}")
    const ro = recoverExchange(dir, () => clock.ms, { append: () => Promise.resolve() }, { repair: false })
    expect(ro.recovery.skippedSnapshots).toEqual([{ path: join(snapshotDir(dir), newest), reason: "not a snapshot file (no body or checksum)", movedTo: null }])
    expect(readdirSync(snapshotDir(dir))).toContain(newest)
  })

  it("refuses a journal with damage before its last segment instead of guessing", async () => {
    const dir = freshDir()
    const a = await open(dir)
    await activity(a, 5, 1)
    await a.close()
    const seg = listSegments(journalDir(dir)).at(-1)!.path
    // A later segment makes the damaged one "not the last".
    appendFileSync(seg, Buffer.from([1, 2, 3]))
    writeFileSync(join(journalDir(dir), "seg-999999999999.log"), "")
    await expect(open(dir)).rejects.toThrow(/journal corrupt/)
  })
})

describe("first-start catalogue", () => {
  it("completes a catalogue cut short by a crash, adding only the missing events", async () => {
    const { loadCatalog } = await import("../../src/runtime/boot.ts")
    const dir = freshDir()
    const a = await open(dir)
    const all = demoCatalog()
    await loadCatalog(a.exchange, all.slice(0, 3))
    await a.close()
    const b = await open(dir)
    expect(b.exchange.catalog.events).toHaveLength(3)
    const seqBefore = b.exchange.lastSeq
    await loadCatalog(b.exchange, all)
    expect(b.exchange.catalog.events.map((e) => e.slug)).toEqual(all.map((e) => e.slug))
    expect(b.exchange.lastSeq).toBe(seqBefore + all.length - 3)
    await b.close()
  })
})
