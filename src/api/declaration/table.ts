// Every route's method and path, written once. Effect-free data, so the browser client imports
// it (src/client): the declaration (api.ts and its group files) adds each route's schemas,
// responses and errors to these entries, the router serves exactly the declared routes
// (src/api/serve.ts), and the client's methods take their method and path from here.
// Grouped and named as the declaration is; docs/contributing.md "Adding a route".

export interface RouteLine {
  readonly method: "GET" | "POST"
  /** With `:param` segments, as the router matches them. */
  readonly path: `/${string}`
}

const get = <const P extends `/${string}`>(path: P) => ({ method: "GET", path }) as const
const post = <const P extends `/${string}`>(path: P) => ({ method: "POST", path }) as const

/** The service's routes by group (the OpenAPI tag), in the router's order. */
export const API_TABLE = {
  session: { register: post("/v1/builders/register") },
  orders: {
    place: post("/v1/orders"),
    cancel: post("/v1/orders/cancel"),
    cancelAll: post("/v1/orders/cancel-all"),
    open: get("/v1/orders/all/:user")
  },
  markets: {
    list: get("/v1/markets"),
    get: get("/v1/markets/:id"),
    book: get("/v1/markets/:id/book"),
    trades: get("/v1/markets/:id/trades"),
    candles: get("/v1/markets/:id/candles")
  },
  account: {
    balance: get("/v1/balance/:user"),
    position: get("/v1/position/:market_id/:user"),
    positions: get("/v1/positions/all/:user"),
    trades: get("/v1/trades/all/:user"),
    deposits: get("/v1/deposits/all/:user"),
    withdrawals: get("/v1/withdrawals/all/:user")
  },
  wallet: {
    withdraw: post("/v1/withdraw-signed"),
    link: post("/v1/wallet/link"),
    get: get("/v1/wallet/:user")
  },
  fees: {
    fees: get("/v1/fees"),
    rewardsConfig: get("/v1/rewards/config"),
    rewardsMe: get("/v1/rewards/me"),
    rewardsWallet: get("/v1/rewards/wallet/:wallet"),
    leaderboard: get("/v1/rewards/leaderboard")
  },
  "lp-bot": {
    sessionNew: post("/v1/lp-bot/session/new"),
    delegate: post("/v1/lp-bot/delegate"),
    start: post("/v1/lp-bot/start"),
    stop: post("/v1/lp-bot/stop"),
    status: get("/v1/lp-bot/status")
  },
  feed: { ws: get("/v1/ws") },
  operator: {
    createEvent: post("/v1/events"),
    marketStatus: post("/v1/admin/markets/:id/status"),
    trading: post("/v1/admin/trading"),
    lp: post("/v1/admin/lp"),
    fees: post("/v1/admin/fees"),
    builderFee: post("/v1/admin/builders/:user"),
    engineBinding: post("/v1/admin/engine-binding"),
    credit: post("/v1/admin/credit"),
    chain: get("/v1/admin/chain"),
    chainResume: post("/v1/admin/chain/resume"),
    clock: get("/v1/admin/clock")
  },
  meta: { openapi: get("/v1/openapi.json"), docs: get("/v1/docs") },
  dev: { faucet: post("/v1/dev/faucet") },
  nonces: { nonces: get("/v1/account/nonce") },
  ops: { health: get("/v1/health"), ready: get("/v1/ready"), metrics: get("/metrics") }
} as const satisfies Readonly<Record<string, Readonly<Record<string, RouteLine>>>>

/** The deposit service's routes (its own port, `{deposit_url}`). */
export const DEPOSIT_TABLE = {
  deposit: {
    nativeAddress: get("/v1/deposit/native-address/:user_address"),
    progress: get("/v1/deposit/progress/:user_address"),
    bridgeAddress: get("/v1/deposit/bridge-address/:pubkey")
  },
  meta: { openapi: get("/v1/openapi.json") }
} as const satisfies Readonly<Record<string, Readonly<Record<string, RouteLine>>>>

/** `path` with each `:name` segment replaced by its value, percent-encoded. */
export const fillPath = (path: string, params: Readonly<Record<string, string>>): string =>
  path.replace(/:(\w+)/g, (_m, name: string) => encodeURIComponent(params[name] ?? ""))
