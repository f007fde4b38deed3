// docs/sdk.md's quickstarts run as written: each block marked `<!-- sdk-quickstart:… -->`
// is extracted, its package imports pointed at src/client, and run against the real
// service on loopback (started at the wall clock, since the quickstart signs with it).
// The browser block runs in Node with `ws` installed as globalThis.WebSocket.
import { mkdirSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import WebSocket from "ws"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { type ClientHarness, startClientHarness } from "./harness.ts"
import { quickstartFromSource, REPO } from "./quickstart.ts"

const outDir = join(REPO, "out", "sdk-docs")

/** Writes the block as a module in out/sdk-docs/ (its package imports pointed at src/client) and runs it; returns what it logged. */
const run = async (name: string): Promise<string[]> => {
  mkdirSync(outDir, { recursive: true })
  const file = join(outDir, `${name}-${process.pid}.ts`)
  writeFileSync(file, `${quickstartFromSource(name, 2)}\nexport {}\n`)
  const lines: string[] = []
  const spy = vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void lines.push(args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" ")))
  try {
    await import(pathToFileURL(file).href)
  } finally {
    spy.mockRestore()
    rmSync(file, { force: true })
  }
  return lines
}

let h: ClientHarness
beforeAll(async () => {
  h = await startClientHarness({ startMs: Date.now() })
  process.env.TWINBOOK_URL = h.url
  process.env.TWINBOOK_WS_URL = h.wsUrl
  Object.assign(globalThis, { TWINBOOK_URL: h.url, TWINBOOK_WS_URL: h.wsUrl, WebSocket })
})
afterAll(async () => {
  delete process.env.TWINBOOK_URL
  delete process.env.TWINBOOK_WS_URL
  for (const k of ["TWINBOOK_URL", "TWINBOOK_WS_URL", "WebSocket"]) delete (globalThis as Record<string, unknown>)[k]
  await h?.close()
})

describe("docs/sdk.md quickstarts", () => {
  it("the Node quickstart registers a new key, reads markets and a book, and gets its order answered", async () => {
    const lines = await run("node")
    expect(lines[0]).toMatch(/^user [1-9A-HJ-NP-Za-km-z]{43,44}$/)
    // The session cookie worked (else 401 unauthorized) and a new key has no balance: the
    // order is refused for that, in the words the quickstart prints.
    expect(lines).toContain("refused: insufficient_balance")
    expect(lines.some((l) => l.includes("?"))).toBe(true) // the market's question was printed
  })

  it("the browser quickstart registers, subscribes to its user channel and receives the portfolio snapshot", async () => {
    const lines = await run("browser")
    expect(lines.slice(0, 3)).toEqual(["feed connecting ", "feed open ", "balance 0"])
    await vi.waitFor(() => expect(h.service.hub.connections).toBe(0)) // the quickstart closed its socket
  })
})
