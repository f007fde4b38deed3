// The HTTP layer's hooks, as ops implements them (src/ops/requests.ts, src/ops/service-ops.ts) and
// src/api/app.ts calls them: declared here so that ops needs nothing from api (api imports ops —
// its routes, its log — never the other way round; test/determinism/layering.test.ts).

/** What a hook reads of a request: src/api/http.ts's HttpRequest has these and more. */
export interface ObservedRequest {
  readonly method: string
  readonly query: URLSearchParams
  /** Lower-case header names. */
  readonly headers: Readonly<Record<string, string | undefined>>
}

/** Where an unexpected error happened: logged with it, so a 500 can be traced from the client's request id. */
export interface ErrorContext {
  readonly requestId: string
  readonly method: string
  /** The route's template (`/v1/orders/all/:user`), never the raw path with its values. */
  readonly route: string
}

export type OnError = (err: unknown, where?: ErrorContext) => void

/** What the request hook is told once a response is ready (src/ops/requests.ts: one histogram observe, one log line). */
export interface RequestDone {
  /** The route's template, `(none)` when no route matched, `(preflight)` for OPTIONS. */
  readonly route: string
  readonly params: Readonly<Record<string, string>>
  readonly status: number
  /** The envelope's code when the answer is an error. */
  readonly errorCode: string | null
  readonly durationMs: number
}

/** Times each request on `monoMs` and reports it; absent in the simulator, which then reads no clock here. */
export interface RequestObserver {
  readonly monoMs: () => number
  done(req: ObservedRequest, r: RequestDone): void
}

