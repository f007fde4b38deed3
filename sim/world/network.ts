// The in-process network: the service's HTTP apps called directly, with seeded
// latency per request and per response, drops, timeouts and (through independent
// latencies) reordering. A client sees exactly what a real one would: a response,
// or a timeout when the request or its response was lost — and then cannot know
// whether the server acted.
import type { App } from "../../src/api/app.ts"
import type { HttpRequest, HttpResponse } from "../../src/api/http.ts"
import type { FetchLike } from "../../src/client/api-client.ts"
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
  /** Each client's own draws, by the client's name (see streamFor). */
  private readonly streams = new Map<string, Rng>()
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

  latencyMs(rng: Rng = this.rng): number {
    return rng.int(this.params.latencyMinMs, this.params.latencyMaxMs)
  }

  /**
   * A client's own stream of network draws (latencies, drops), derived from its name. With
   * one shared stream, removing a client would shift every other client's latencies; keyed
   * by name, the others' requests take exactly the same time until the market itself differs.
   */
  streamFor(name: string): Rng {
    let rng = this.streams.get(name)
    if (rng === undefined) this.streams.set(name, (rng = this.rng.fork(`client/${name}`)))
    return rng
  }

  /** A fetch-like function for one client; `ip` is what the rate limiter sees, `name` keys its draws (default: the shared stream). */
  fetchFor(ip: string, name?: string): FetchLike {
    const rng = name === undefined ? this.rng : this.streamFor(name)
    return (url, init) => this.request(rng, ip, url, init?.method ?? "GET", init?.headers ?? {}, init?.body ?? "")
  }

  private request(rng: Rng, ip: string, url: string, method: string, headers: Record<string, string>, body: string): ReturnType<FetchLike> {
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
      if (app === undefined || rng.chance(this.params.dropPct / 100)) {
        this.stats.dropped++
        return
      }
      this.scheduler.after(this.latencyMs(rng), () => {
        if (epoch !== this.epoch) return
        void app(req).then((res) => {
          if (epoch !== this.epoch || rng.chance(this.params.responseDropPct / 100)) {
            this.stats.dropped++
            return
          }
          this.scheduler.after(this.latencyMs(rng), () => {
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
