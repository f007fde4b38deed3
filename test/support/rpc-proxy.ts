// A JSON-RPC proxy in front of a test chain, one per sequencer process: it forwards every request,
// records the transactions the process sends (to which contract), and can kill the process at an
// exact point — after a transaction it sent reached the chain (mined, on Anvil's automine) and
// before the process hears back — so a test makes "sent on chain, not yet journaled" happen for
// real, as an event, with no timing (test/cluster/chain-failover.test.ts).
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { parseTransaction, type Hex } from "viem"

export interface SentTx {
  readonly to: string | null
  readonly hash: string | null
}

export interface RpcProxy {
  readonly url: string
  /** Every transaction sent through this proxy, in order (`to` lowercase). */
  readonly sent: SentTx[]
  /**
   * The next transaction sent to `to` is forwarded; once the chain has answered, `kill()` runs
   * (and is awaited) before the answer would go back, and the caller's connection is cut.
   * Resolves with that transaction's hash.
   */
  killAfterSend(to: string, kill: () => Promise<void>): Promise<string>
  close(): Promise<void>
}

interface Armed {
  readonly to: string
  readonly kill: () => Promise<void>
  readonly done: (hash: string) => void
}

export const startRpcProxy = async (upstream: string): Promise<RpcProxy> => {
  const sent: SentTx[] = []
  let armed: Armed | null = null
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      void (async () => {
        const body = Buffer.concat(chunks).toString("utf8")
        const calls = ((): Array<{ method?: string; params?: unknown[] }> => {
          try {
            const parsed = JSON.parse(body) as unknown
            return (Array.isArray(parsed) ? parsed : [parsed]) as Array<{ method?: string; params?: unknown[] }>
          } catch {
            return []
          }
        })()
        const sends = calls
          .filter((c) => c.method === "eth_sendRawTransaction")
          .map((c) => (parseTransaction(c.params?.[0] as Hex).to ?? null)?.toLowerCase() ?? null)
        let upstreamRes: Response
        try {
          upstreamRes = await fetch(upstream, { method: "POST", headers: { "content-type": "application/json" }, body })
        } catch {
          res.destroy()
          return
        }
        const text = await upstreamRes.text()
        let hash: string | null = null
        try {
          const r = JSON.parse(text) as { result?: unknown }
          if (typeof r.result === "string") hash = r.result
        } catch {
          // not JSON: passed on as it is
        }
        for (const to of sends) sent.push({ to, hash })
        const hit = armed !== null && sends.includes(armed.to) ? armed : null
        if (hit !== null) {
          armed = null
          await hit.kill()
          res.destroy()
          hit.done(hash ?? "")
          return
        }
        res.writeHead(upstreamRes.status, { "content-type": upstreamRes.headers.get("content-type") ?? "application/json" })
        res.end(text)
      })()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    sent,
    killAfterSend: (to, kill) => new Promise<string>((done) => (armed = { to: to.toLowerCase(), kill, done })),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
