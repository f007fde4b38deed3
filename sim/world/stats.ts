// Counters a run reports in its summary.
export class RunStats {
  actions = 0
  ordersSent = 0
  ordersAcked = 0
  ordersQueued = 0
  cancels = 0
  fills = 0
  volumeMicro = 0
  depositsSent = 0
  withdrawalsRequested = 0
  withdrawalsAcked = 0
  badInputsSent = 0
  invariantChecks = 0
  wsFrames = 0
  wsReconnects = 0
  agentsOnboarded = 0
  lpBotsStarted = 0
  lpBotChecks = 0
  readonly errorCodes = new Map<string, number>()
  readonly faults: Array<{ readonly atSec: number; readonly kind: string; readonly detail: string }> = []
  /** Broken invariants, view mismatches and unexpected responses: any entry fails the run. */
  readonly failures: string[] = []

  code(code: string): void {
    this.errorCodes.set(code, (this.errorCodes.get(code) ?? 0) + 1)
  }

  fail(what: string): void {
    // The first hundred are plenty to diagnose; the count still grows.
    if (this.failures.length < 100) this.failures.push(what)
    else this.failures[99] = `... and more (last: ${what})`
  }
}
