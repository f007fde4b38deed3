// Resting orders by id. Ids are sequential, so most lookups are two array
// indexings into 1,024-slot pages instead of a hash probe (the Map was ~20% of
// engine time). A page whose few survivors keep it alive while newer pages fill
// is evacuated into a small Map, so memory stays proportional to live orders
// (at most one 8 KiB page per 16 live orders) however long an order rests.
import type { Order } from "./state.ts"

const PAGE_BITS = 10
const PAGE_SIZE = 1 << PAGE_BITS
const MASK = PAGE_SIZE - 1
const EVACUATE_BELOW = 16

interface Page {
  readonly slots: Array<Order | undefined>
  live: number
}

export class OrderTable {
  private readonly pages: Array<Page | undefined> = []
  private readonly overflow = new Map<number, Order>()
  private newestPage = 0
  size = 0

  get(id: number): Order | undefined {
    const page = this.pages[id >>> PAGE_BITS]
    return page !== undefined ? page.slots[id & MASK] : this.overflow.get(id)
  }

  set(order: Order): void {
    const p = order.id >>> PAGE_BITS
    let page = this.pages[p]
    if (page === undefined) {
      if (p < this.newestPage) {
        // An old page already evacuated: its late arrivals (restores) live in the overflow.
        this.overflow.set(order.id, order)
        this.size++
        return
      }
      page = { slots: new Array<Order | undefined>(PAGE_SIZE).fill(undefined), live: 0 }
      this.pages[p] = page
      this.newestPage = p
    }
    page.slots[order.id & MASK] = order
    page.live++
    this.size++
  }

  delete(id: number): void {
    const p = id >>> PAGE_BITS
    const page = this.pages[p]
    if (page === undefined) {
      if (this.overflow.delete(id)) this.size--
      return
    }
    if (page.slots[id & MASK] === undefined) return
    page.slots[id & MASK] = undefined
    page.live--
    this.size--
    if (p === this.newestPage) return
    if (page.live === 0) this.pages[p] = undefined
    else if (page.live < EVACUATE_BELOW) {
      for (const o of page.slots) if (o !== undefined) this.overflow.set(o.id, o)
      this.pages[p] = undefined
    }
  }

  /** Every order, in no particular order. */
  *values(): IterableIterator<Order> {
    for (const page of this.pages) if (page !== undefined) for (const o of page.slots) if (o !== undefined) yield o
    yield* this.overflow.values()
  }
}
