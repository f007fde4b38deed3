// The operator routes (`Authorization: Bearer <ADMIN_TOKEN>`), declared like the rest; moved out
// of api.ts to keep it under the house's 500 lines. api.ts lists the group as `operator`.
import { Schema } from "effect"
import type { ErrorCode } from "../../domain/errors.ts"
import { BindingRequest, BuilderFeeRequest, CreateEventRequest, CreditRequest, FeesRequest, MarketStatusRequest, SurfaceRequest } from "../../domain/schemas.ts"
import type { Group } from "./endpoint.ts"
import { MarketRef, UserKey } from "./params.ts"
import { API_TABLE as T, type RouteLine } from "./table.ts"
import * as W from "../../domain/wire.ts"

/** Codes of every operator route (src/api/context.ts requireAdmin). */
export const ADMIN: ReadonlyArray<ErrorCode> = ["unauthorized", "rate_limited"]

const admin = <const L extends RouteLine, const S extends Schema.Schema.Any | undefined, const P extends Schema.Struct.Fields | undefined>(
  line: L,
  summary: string,
  body: S,
  success: Schema.Schema.Any,
  errors: ReadonlyArray<ErrorCode>,
  pathParams?: P
) => ({
  ...line,
  summary: `Operator: ${summary}`,
  ...((body === undefined ? {} : { body }) as S extends Schema.Schema.Any ? { readonly body: S } : {}),
  ...((pathParams === undefined ? {} : { pathParams }) as P extends Schema.Struct.Fields ? { readonly pathParams: P } : {}),
  auth: "admin" as const,
  success,
  errors: [...ADMIN, ...errors],
  preamble: ["admin"] as const
})

const O = T.operator

export const operator = {
  createEvent: admin(O.createEvent, "create an event and its outcome markets", CreateEventRequest, W.Market, ["invalid_shape", "event_exists", "order_rejected"]),
  marketStatus: admin(O.marketStatus, "halt, resume or resolve a market", MarketStatusRequest, W.MarketStatusChanged, ["invalid_shape", "not_found", "order_rejected", "market_resolved", "market_halted"], { id: MarketRef }),
  trading: admin(O.trading, "open, close or pause trading", SurfaceRequest, W.TradingSurface, ["invalid_shape"]),
  lp: admin(O.lp, "open or close the LP surface", SurfaceRequest, W.LpSurface, ["invalid_shape", "order_rejected"]),
  fees: admin(O.fees, "taker fees and maker rebate", FeesRequest, W.FeesChanged, ["invalid_shape", "not_found", "order_rejected"]),
  // An unknown or malformed user key is a builder not found.
  builderFee: { ...admin(O.builderFee, "a builder's fee_bps", BuilderFeeRequest, W.BuilderRecord, ["invalid_shape", "not_found", "order_rejected"], { user: UserKey }), fieldErrors: { user: "not_found" } },
  engineBinding: admin(O.engineBinding, "the withdraw path's engine binding (up, unreachable, disabled)", BindingRequest, W.EngineBinding, ["invalid_shape"]),
  // Refused while DEV_CREDIT is off before the body is decoded.
  credit: { ...admin(O.credit, "development credit (DEV_CREDIT)", CreditRequest, W.Credited, ["invalid_shape", "not_found", "order_rejected"]), preamble: ["admin", "dev_credit"] },
  chain: {
    ...O.chain,
    summary: "Operator: the chain guard — checkpoint, saved chain state, and why crediting and payouts halted",
    auth: "admin",
    success: W.ChainStatus,
    errors: ADMIN,
    preamble: ["admin"]
  },
  chainResume: admin(O.chainResume, "after reconciling a chain halt, anchor again on the chain as it is and resume", undefined, W.ChainStatus, ["not_found"]),
  clock: {
    ...O.clock,
    summary: "Operator: wall, monotonic and journal clocks, and wall-clock steps detected",
    auth: "admin",
    success: W.ClockStatus,
    errors: [...ADMIN, "not_found"],
    preamble: ["admin"]
  }
} as const satisfies Group
