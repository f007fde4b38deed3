// Events and their tradable outcome markets (SPEC §2 "Market (event)").
// A binary event is its own market (event_id = market_id); each outcome of a
// multi-outcome event is a separate binary market with its own market_id.
import { createHash } from "node:crypto"
import type { MarketStatus, Outcome } from "../engine/types.ts"

export const CATEGORIES = ["BTC", "ETH", "DOGE", "SOL", "XRP", "BNB", "Sports", "Politics", "Culture"] as const
export type Category = (typeof CATEGORIES)[number]

export interface OutcomeMarket {
  readonly market_id: string
  readonly label: string
  readonly slug: string
  readonly question: string
  status: MarketStatus
  winning_outcome: Outcome | null
}

export interface EventRecord {
  readonly event_id: string
  readonly question: string
  readonly category: Category
  readonly slug: string
  readonly image: string
  readonly description: string
  readonly tags: ReadonlyArray<string>
  readonly expiry: number
  readonly end_date: number
  readonly fee_bps: number
  /** Notional traded across the event's outcome markets, in micro-USDC. */
  volume: number
  readonly neg_risk: boolean
  readonly outcomes: ReadonlyArray<OutcomeMarket>
  readonly resolution_metadata: Record<string, unknown>
  readonly resolution_source: string
  readonly created_at: number
}

export interface NewEvent {
  readonly question: string
  readonly category: Category
  readonly slug: string
  readonly image?: string | undefined
  readonly description?: string | undefined
  readonly tags?: ReadonlyArray<string> | undefined
  readonly expiry: number
  readonly end_date?: number | undefined
  readonly fee_bps?: number | undefined
  readonly neg_risk?: boolean | undefined
  readonly outcomes?: ReadonlyArray<{ readonly label: string; readonly slug?: string | undefined; readonly question?: string | undefined }> | undefined
  readonly resolution_metadata?: Record<string, unknown> | undefined
  readonly resolution_source?: string | undefined
}

/** Stable 32-byte hex ids derived from slugs, so a catalogue loads to the same ids everywhere. */
export const idFromSlug = (kind: "event" | "market", slug: string): string =>
  createHash("sha256").update(`twinbook:${kind}:${slug}`).digest("hex")

export const slugify = (text: string): string =>
  text.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 80)

export class Catalog {
  readonly events: EventRecord[] = []
  private readonly byEventKey = new Map<string, EventRecord>()
  private readonly byMarketKey = new Map<string, { event: EventRecord; market: OutcomeMarket }>()

  /** Builds the record for a new event (not yet added); null when a slug or id is taken. */
  build(input: NewEvent, nowSec: number, defaultFeeBps: number): EventRecord | null {
    const multi = input.outcomes !== undefined && input.outcomes.length > 0
    const event_id = multi ? idFromSlug("event", input.slug) : idFromSlug("market", input.slug)
    const outcomes: OutcomeMarket[] = multi
      ? input.outcomes!.map((o) => {
          const slug = o.slug ?? `${input.slug}-${slugify(o.label)}`
          return {
            market_id: idFromSlug("market", slug),
            label: o.label,
            slug,
            question: o.question ?? `${input.question} — ${o.label}`,
            status: "active" as MarketStatus,
            winning_outcome: null
          }
        })
      : [{ market_id: event_id, label: "Yes", slug: input.slug, question: input.question, status: "active", winning_outcome: null }]
    const keys = [event_id, input.slug, ...outcomes.flatMap((o) => [o.market_id, o.slug])]
    if (new Set(keys).size !== keys.length - (multi ? 0 : 2)) return null
    if (keys.some((k) => this.byEventKey.has(k) || this.byMarketKey.has(k))) return null
    return {
      event_id,
      question: input.question,
      category: input.category,
      slug: input.slug,
      image: input.image ?? "",
      description: input.description ?? "",
      tags: input.tags ?? [],
      expiry: input.expiry,
      end_date: input.end_date ?? input.expiry,
      fee_bps: input.fee_bps ?? defaultFeeBps,
      volume: 0,
      neg_risk: input.neg_risk ?? false,
      outcomes,
      resolution_metadata: input.resolution_metadata ?? {},
      resolution_source: input.resolution_source ?? "",
      created_at: nowSec
    }
  }

  add(event: EventRecord): void {
    this.events.push(event)
    this.byEventKey.set(event.event_id, event)
    this.byEventKey.set(event.slug, event)
    for (const market of event.outcomes) {
      this.byMarketKey.set(market.market_id, { event, market })
      this.byMarketKey.set(market.slug, { event, market })
    }
  }

  /** An event by event_id or slug; an outcome market's id or slug answers with its event. */
  event(key: string): EventRecord | undefined {
    // Same leniency for ids as market(): any case, optional 0x.
    return this.byEventKey.get(key) ?? this.byEventKey.get(key.toLowerCase().replace(/^0x/, "")) ?? this.market(key)?.event
  }

  /** A tradable market by market_id (hex, any case, optional 0x) or market slug. */
  market(key: string): { event: EventRecord; market: OutcomeMarket } | undefined {
    return this.byMarketKey.get(key) ?? this.byMarketKey.get(key.toLowerCase().replace(/^0x/, ""))
  }

  /** Event status summarises its markets: resolved when all are, active when any is, else halted. */
  static eventStatus(event: EventRecord): MarketStatus {
    if (event.outcomes.every((o) => o.status === "resolved")) return "resolved"
    return event.outcomes.some((o) => o.status === "active") ? "active" : "halted"
  }
}
