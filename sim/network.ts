// The in-process network: the service's HTTP apps called directly, with seeded
// latency per request and per response, drops, timeouts and (through independent
// latencies) reordering. A client sees exactly what a real one would: a response,
// or a timeout when the request or its response was lost — and then cannot know
// whether the server acted.
import type { App } from "../src/api/app.ts"
import type { HttpRequest, HttpResponse } from "../src/api/http.ts"
import type { FetchLike } from "../src/client/api-client.ts"
import type { Rng } from "./random.ts"
import type { Scheduler } from "./scheduler.ts"

export interface NetworkParams {
  /** One-way latency, uniform in [min, max] milliseconds. */
  readonly latencyMinMs: number
  readonly latencyMaxMs: number
  /** Requests lost before reaching the server, in percent. */
  readonly dropPct: number
  /** Responses lost after the server acted, in percent. */
  readonly responseDropPct: number
  /** A client gives up after this long without a response. */
  readonly timeoutMs: number
}

export const DEFAULT_NETWORK: NetworkParams = { latencyMinMs: 1, latencyMaxMs: 20, dropPct: 0, responseDropPct: 0, timeoutMs: 5_000 }

/** What a client sees when its request got no answer in time. */
export class SimTimeout extends Error {
  override readonly name = "SimTimeout"
}

export interface NetworkStats {
  requests: number
  responses: number
  dropped: number
  timeouts: number
  readonly byStatus: Map<number, number>
}

const EMPTY_QUERY = new URLSearchParams()

export class SimNetwork {
  readonly stats: NetworkStats = { requests: 0, responses: 0, dropped: 0, timeouts: 0, byStatus: new Map() }
  private readonly hosts = new Map<string, App>()
  /** Bumped by a crash: anything in flight to the old process is lost. */
  private epoch = 0

  constructor(
    private readonly scheduler: Scheduler,
    private readonly rng: Rng,
    public params: NetworkParams
  ) {}

  /** Serves `http://<host>/...` with `app` (replacing any previous app: a restarted process). */
  route(host: string, app: App): void {
    this.hosts.set(host, app)
  }

  /** Every request and response in flight is lost (the process they were bound for died). */
  cut(): void {
    this.epoch++
  }

  latencyMs(): number {
    return this.rng.int(this.params.latencyMinMs, this.params.latencyMaxMs)
  }

  /** A fetch-like function for one client; `ip` is what the rate limiter sees. */
  fetchFor(ip: string): FetchLike {
    return (url, init) => this.request(ip, url, init?.method ?? "GET", init?.headers ?? {}, init?.body ?? "")
  }

  private request(ip: string, url: string, method: string, headers: Record<string, string>, body: string): ReturnType<FetchLike> {
    const parsed = parseUrl(url)
    const lower: Record<string, string> = {}
    for (const k in headers) lower[k.toLowerCase()] = headers[k]!
    const req: HttpRequest = { method, path: parsed.path, query: parsed.query, headers: lower, body, ip }
    const app = this.hosts.get(parsed.host)
    const epoch = this.epoch
    this.stats.requests++
    return new Promise((resolve, reject) => {
      let settled = false
      const timer = this.scheduler.after(this.params.timeoutMs, () => {
        if (settled) return
        settled = true
        this.stats.timeouts++
        reject(new SimTimeout(`${method} ${parsed.path}: no response in ${this.params.timeoutMs} ms`))
      })
      if (app === undefined || this.rng.chance(this.params.dropPct / 100)) {
        this.stats.dropped++
        return
      }
      this.scheduler.after(this.latencyMs(), () => {
        if (epoch !== this.epoch) return
        void app(req).then((res) => {
          if (epoch !== this.epoch || this.rng.chance(this.params.responseDropPct / 100)) {
            this.stats.dropped++
            return
          }
          this.scheduler.after(this.latencyMs(), () => {
            if (settled || epoch !== this.epoch) return
            settled = true
            timer.cancel()
            this.stats.responses++
            this.stats.byStatus.set(res.status, (this.stats.byStatus.get(res.status) ?? 0) + 1)
            resolve(responseOf(res))
          })
        })
      })
    })
  }
}

const parseUrl = (url: string): { host: string; path: string; query: URLSearchParams } => {
  const rest = url.startsWith("http://") ? url.slice(7) : url
  const slash = rest.indexOf("/")
  const host = slash === -1 ? rest : rest.slice(0, slash)
  const pathAndQuery = slash === -1 ? "/" : rest.slice(slash)
  const q = pathAndQuery.indexOf("?")
  return q === -1
    ? { host, path: pathAndQuery, query: EMPTY_QUERY }
    : { host, path: pathAndQuery.slice(0, q), query: new URLSearchParams(pathAndQuery.slice(q + 1)) }
}

const responseOf = (res: HttpResponse): Awaited<ReturnType<FetchLike>> => ({
  status: res.status,
  headers: { get: (name: string) => res.headers[name.toLowerCase()] ?? null },
  json: () => Promise.resolve(JSON.parse(res.body)),
  text: () => Promise.resolve(res.body)
})
