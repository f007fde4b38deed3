// The load balancer in front of the sequencer pair (docs/simulation.md "Failover"): what the
// clients' "api" and "deposit" hosts are in a cluster world. It probes each process's
// `/v1/ready` every period (the standby answers 503, the leader 200; a probe unanswered by the
// next one — a paused or dead process — counts as not ready) and sends each request to the
// ready process it used last, else the next ready one. A refused connection (a dead process, or
// a standby, which serves no deposit service) moves on to the next at once; an answer of 503
// `not_leader` is passed on as it is (a write may have been refused after it was handled, so it
// is not retried for the client) and marks that process not ready; with none ready the balancer
// itself answers 503 `not_leader` with `retry_after`. Clients retry as they would live.
import type { App } from "../../src/api/app.ts"
import { errorResponse, type HttpRequest, type HttpResponse } from "../../src/api/http.ts"
import { notLeader } from "../../src/cluster/sequencer.ts"
import type { SimProcess } from "./cluster-process.ts"
import type { Scheduled, Scheduler } from "./scheduler.ts"

const PROBE: HttpRequest = { method: "GET", path: "/v1/ready", query: new URLSearchParams(), headers: {}, body: "", ip: "10.254.0.1" }

const isNotLeader = (res: HttpResponse): boolean => res.status === 503 && res.body.includes('"error":"not_leader"')

export class LoadBalancer {
  private preferred = 0
  private readonly ready: boolean[]
  /** The process each slot's unanswered probe went to, if any. */
  private readonly probing: Array<SimProcess | null>
  private timer: Scheduled | null = null

  constructor(
    private readonly scheduler: Scheduler,
    /** The current process of each slot. */
    private readonly procs: () => ReadonlyArray<SimProcess>
  ) {
    const n = procs().length
    this.ready = Array.from({ length: n }, () => false)
    this.probing = Array.from({ length: n }, () => null)
  }

  start(everyMs: number): void {
    this.probe()
    this.timer = this.scheduler.every(everyMs, () => this.probe())
  }

  stop(): void {
    this.timer?.cancel()
  }

  private probe(): void {
    for (const [i, p] of this.procs().entries()) {
      if (this.probing[i] === p) {
        // Still no answer from the last probe: not ready, and no second probe piles up.
        this.ready[i] = false
        continue
      }
      const answer = p.handle("api", PROBE)
      if (answer === null) {
        this.ready[i] = false
        continue
      }
      this.probing[i] = p
      void answer.then((res) => {
        if (this.probing[i] !== p) return
        this.probing[i] = null
        this.ready[i] = res.status === 200
      })
    }
  }

  /** The balancer's side of host `host`. */
  app(host: string): App {
    return (req) => {
      const procs = this.procs()
      for (let k = 0; k < procs.length; k++) {
        const i = (this.preferred + k) % procs.length
        if (!this.ready[i]) continue
        const answer = procs[i]!.handle(host, req)
        if (answer === null) {
          // Connection refused: nothing was sent, so the next one may take it.
          if (host === "api") this.ready[i] = false
          continue
        }
        this.preferred = i
        return answer.then((res) => {
          if (isNotLeader(res)) this.ready[i] = false
          return res
        })
      }
      return Promise.resolve(errorResponse(notLeader("no sequencer is ready behind the load balancer")))
    }
  }
}
