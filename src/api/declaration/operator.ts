// The operator routes (`Authorization: Bearer <ADMIN_TOKEN>`), declared like the rest; moved out
// of api.ts to keep it under the house's 500 lines. api.ts lists the group as `operator`.
import { Schema } from "effect"
import type { ErrorCode } from "../../domain/errors.ts"
import { BindingRequest, BuilderFeeRequest, CreateEventRequest, CreditRequest, FeesRequest, MarketStatusRequest, SurfaceRequest } from "../../domain/schemas.ts"
import type { RouteSpec } from "./endpoint.ts"
import { MarketRef, UserKey } from "./params.ts"
import * as W from "./wire.ts"

/** Codes of every operator route (src/api/context.ts requireAdmin). */
export const ADMIN: ReadonlyArray<ErrorCode> = ["unauthorized", "rate_limited"]

const admin = (name: string, path: `/${string}`, summary: string, body: Schema.Schema.Any | undefined, success: Schema.Schema.Any, errors: ReadonlyArray<ErrorCode>, pathParams?: Schema.Struct.Fields): RouteSpec => ({
  name,
  method: "POST",
  path,
  summary: `Operator: ${summary}`,
  ...(body === undefined ? {} : { body }),
  ...(pathParams === undefined ? {} : { pathParams }),
  auth: "admin",
  success,
  errors: [...ADMIN, ...errors]
})

export const operator: ReadonlyArray<RouteSpec> = [
  admin("createEvent", "/v1/events", "create an event and its outcome markets", CreateEventRequest, W.Market, ["invalid_shape", "event_exists", "order_rejected"]),
  admin("marketStatus", "/v1/admin/markets/:id/status", "halt, resume or resolve a market", MarketStatusRequest, W.MarketStatusChanged, ["invalid_shape", "not_found", "order_rejected", "market_resolved", "market_halted"], { id: MarketRef }),
  admin("trading", "/v1/admin/trading", "open, close or pause trading", SurfaceRequest, W.TradingSurface, ["invalid_shape"]),
  admin("lp", "/v1/admin/lp", "open or close the LP surface", SurfaceRequest, W.LpSurface, ["invalid_shape", "order_rejected"]),
  admin("fees", "/v1/admin/fees", "taker fees and maker rebate", FeesRequest, W.FeesChanged, ["invalid_shape", "not_found", "order_rejected"]),
  admin("builderFee", "/v1/admin/builders/:user", "a builder's fee_bps", BuilderFeeRequest, W.BuilderRecord, ["invalid_shape", "not_found", "order_rejected"], { user: UserKey }),
  admin("engineBinding", "/v1/admin/engine-binding", "the withdraw path's engine binding (up, unreachable, disabled)", BindingRequest, W.EngineBinding, ["invalid_shape"]),
  admin("credit", "/v1/admin/credit", "development credit (DEV_CREDIT)", CreditRequest, W.Credited, ["invalid_shape", "not_found", "order_rejected"]),
  {
    name: "chain",
    method: "GET",
    path: "/v1/admin/chain",
    summary: "Operator: the chain guard — checkpoint, saved chain state, and why crediting and payouts halted",
    auth: "admin",
    success: W.ChainStatus,
    errors: ADMIN
  },
  admin("chainResume", "/v1/admin/chain/resume", "after reconciling a chain halt, anchor again on the chain as it is and resume", undefined, W.ChainStatus, ["not_found"]),
  {
    name: "clock",
    method: "GET",
    path: "/v1/admin/clock",
    summary: "Operator: wall, monotonic and journal clocks, and wall-clock steps detected",
    auth: "admin",
    success: W.ClockStatus,
    errors: [...ADMIN, "not_found"]
  }
]
