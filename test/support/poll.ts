// Waiting for an event in tests on real processes (a line, a credit, a guard pass), and a JSON
// request to them. The bound is a hang detector, never a speed expectation: it counts the pauses
// between probes, so a slow machine only makes the wait longer.
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Probes every 50 ms until `probe` gives a value other than null; throws after `timeoutMs` of pauses. */
export const until = async <A>(what: string, probe: () => Promise<A | null> | A | null, timeoutMs = 60_000): Promise<A> => {
  for (let waited = 0; ; waited += 50) {
    const value = await probe()
    if (value !== null) return value
    if (waited >= timeoutMs) throw new Error(`timed out waiting for ${what}`)
    await sleep(50)
  }
}

/** A JSON request: status and parsed body (`any`: the tests read the fields they check). */
export const json = async (url: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<{ status: number; body: any }> => {
  const res = await fetch(url, {
    method: init.method ?? "GET",
    headers: { "content-type": "application/json", ...init.headers },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) })
  })
  return { status: res.status, body: (await res.json()) as any }
}
