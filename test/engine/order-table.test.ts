// The paged order table behaves exactly like a Map<id, Order> — across pages,
// evacuations of sparse old pages, and re-use — whatever the sequence.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { OrderTable } from "../../src/engine/order-table.ts"
import type { Order } from "../../src/engine/state.ts"

const order = (id: number): Order => ({ id }) as Order

describe("OrderTable", () => {
  it("agrees with a Map under generated rest/remove sequences spanning many pages", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 30 }), fc.double({ min: 0, max: 1, noNaN: true })), { minLength: 1, maxLength: 400 }),
        (steps) => {
          const table = new OrderTable()
          const model = new Map<number, Order>()
          let nextId = 1
          for (const [burst, pick] of steps) {
            // A burst of new resting orders (ids only grow, as in the engine)…
            for (let i = 0; i < burst * 20; i++) {
              const o = order(nextId++)
              table.set(o)
              model.set(o.id, o)
            }
            // …then cancels: mostly recent orders, sometimes an old survivor.
            const live = [...model.keys()]
            for (let i = 0; i < burst * 19 && live.length > 0; i++) {
              const id = live.splice(Math.floor(pick * live.length * ((i % 3) + 1) / 3) % live.length, 1)[0]!
              table.delete(id)
              model.delete(id)
            }
            table.delete(nextId + 5) // unknown ids are ignored
          }
          expect(table.size).toBe(model.size)
          for (let id = 1; id < nextId; id++) expect(table.get(id)).toBe(model.get(id))
          expect([...table.values()].map((o) => o.id).sort((a, b) => a - b)).toEqual([...model.keys()].sort((a, b) => a - b))
        }
      ),
      { numRuns: 200 }
    )
  })

  it("frees sparse old pages: a long-lived survivor per page does not keep 8 KiB pages alive", () => {
    const table = new OrderTable()
    for (let id = 1; id <= 100 * 1024; id++) table.set(order(id))
    // Keep one order in every 1,024; cancel the rest.
    for (let id = 1; id <= 100 * 1024; id++) if (id % 1024 !== 7) table.delete(id)
    expect(table.size).toBe(100)
    const pages = (table as unknown as { pages: unknown[] }).pages.filter((p) => p !== undefined)
    expect(pages.length).toBeLessThanOrEqual(1) // only the newest page stays paged
    for (let k = 0; k < 100; k++) expect(table.get(k * 1024 + 7)?.id).toBe(k * 1024 + 7)
  })
})
