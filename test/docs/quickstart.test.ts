// docs/quickstart.md runs as written. Every ```sh and ```ts block in it must carry a
// `<!-- quickstart:<name> -->` marker (an unmarked command fails this test), and they run in order:
// `start` is checked to be `npm start` with environment variables and started as that script's
// process (`src/main.ts`) with them, plus a temp DATA_DIR, free ports and WEB=false; the doc's three
// addresses are rewritten to the ports it got. sh blocks run in bash (`set -euo pipefail`), their
// exported variables carried to the next block; ts blocks run with `node --import tsx` from out/,
// their `./src/` imports re-pointed. Each block's output is checked.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { anvilProcessesOn } from "../support/anvil-chain.ts"
import { freePort } from "../support/free-port.ts"
import { type ChildServer, startChildServer } from "../support/child-server.ts"
import { runProcess } from "../support/run-process.ts"

const ROOT = join(import.meta.dirname, "..", "..")
const OUT = join(ROOT, "out", "quickstart")

export interface Block {
  readonly name: string
  readonly lang: "sh" | "ts"
  readonly code: string
}

/** The runnable blocks of the page, in order; throws on a ```sh/```ts block without a marker. */
export const quickstartBlocks = (doc: string): Block[] => {
  const blocks: Block[] = []
  const fence = /(?:<!-- quickstart:([\w-]+) -->\n)?```(\w*)\n([\s\S]*?)\n```/g
  for (const m of doc.matchAll(fence)) {
    const [, name, lang, code] = m
    if (lang !== "sh" && lang !== "ts") continue
    if (name === undefined) throw new Error(`an unmarked \`\`\`${lang} block: every command must run in the test:\n${code}`)
    blocks.push({ name, lang, code: code! })
  }
  return blocks
}

const baseEnv = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) if (k !== "NODE_OPTIONS" && !k.startsWith("VITEST")) env[k] = v
  return env
}

let service: ChildServer | null = null
let chainPort = 0
const dirs: string[] = []

afterAll(async () => {
  if (service !== null) {
    service.kill("SIGTERM")
    const stopped = await Promise.race([service.exited.then(() => true), new Promise((r) => setTimeout(() => r(false), 30_000))])
    if (!stopped) service.kill("SIGKILL")
    await service.exited
  }
  // The embedded Anvil stops with the service; one left behind anyway is stopped by its PID.
  for (const pid of chainPort === 0 ? [] : anvilProcessesOn(chainPort)) process.kill(pid, "SIGKILL")
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

/** What each block must print (a block not listed must only succeed). */
const CHECKS: Record<string, (out: string, env: Record<string, string>) => void> = {
  look: (out, env) => {
    const lines = out.trim().split("\n")
    expect(lines).toHaveLength(4)
    for (const line of lines.slice(0, 3)) expect(line).toMatch(/^[a-z0-9-]+ {2}.+\?$/)
    expect(JSON.parse(lines[3]!)).toEqual({ market_id: env.MARKET, bids: [], asks: [], ts: expect.any(Number) })
  },
  trade: (out) => {
    const lines = out.trim().split("\n")
    expect(lines[0]).toMatch(/^alice [1-9A-HJ-NP-Za-km-z]{43,44} credited 100000000$/)
    expect(lines[1]).toMatch(/^bob [1-9A-HJ-NP-Za-km-z]{43,44} credited 100000000$/)
    expect(lines.slice(2)).toEqual([expect.stringMatching(/^alice order \d+ rests 50$/), "bob filled 20 remaining 0", "alice 20 YES", "bob 20 NO", "alice last nonce true"])
  },
  "after-trade": (out) => {
    const [trade, bids] = out.trim().split("\n")
    expect(JSON.parse(trade!)).toEqual({ price: 6000, size: 20, side: "buy" })
    expect(JSON.parse(bids!)).toEqual([{ price: 4000, size: 30 }])
  },
  ws: (out) => {
    const withNew = JSON.stringify([{ price: 4000, size: 30 }, { price: 3500, size: 10 }])
    const before = JSON.stringify([{ price: 4000, size: 30 }])
    expect(out.trim().split("\n")).toEqual(["subscribed", `seed ${before}`, `book_update ${withNew}`, `rest ${withNew}`, `book_update ${before}`])
  },
  viem: (out) => expect(out.trim().split("\n")).toEqual(["faucet 200", "deposit credited 25 USDG", "withdrawal confirmed; wallet holds 35 USDG"]),
  "cast-wallet": (out, env) => {
    expect(env.WALLET).toMatch(/^0x[0-9a-fA-F]{40}$/)
    expect(out).toMatch(new RegExp(`^minted 30 USDG \\(30000000 micro\\) to ${env.WALLET!.toLowerCase()}: tx 0x[0-9a-f]{64}$`, "m"))
    expect(out.trim().split("\n").at(-1)).toBe("30000000 [3e7]")
  },
  "cast-link": (out) => expect(out.trim()).toBe("linked true"),
  "cast-deposit": (out) => expect(JSON.parse(out.trim())).toEqual({ stage: "credited", amount_micro: 20_000_000 }),
  "cast-withdraw": (out) => {
    expect(out.trim().split("\n")).toEqual(["bob balance 107.988 USDG", "withdrawal of 5 USDG confirmed"])
  },
  "cast-balance": (out) => expect(out.trim()).toBe("15000000 [1.5e7]")
}

describe("docs/quickstart.md", () => {
  it("marks every command, and each runs in order against a service started as the page says, printing what it should", async () => {
    const blocks = quickstartBlocks(readFileSync(join(ROOT, "docs", "quickstart.md"), "utf8"))
    expect(blocks.map((b) => b.name)).toEqual(["start", "env", "look", "keys", "trade", "after-trade", "ws", "viem", "cast-wallet", "cast-link", "cast-deposit", "cast-withdraw", "cast-balance"])
    expect(Object.keys(CHECKS).every((name) => blocks.some((b) => b.name === name))).toBe(true)

    // 1. `npm start` with the page's variables, as the process that script runs.
    const start = /^((?:[A-Z_]+=\S+ )*)npm start$/.exec(blocks[0]!.code.trim())
    expect(start, blocks[0]!.code).not.toBeNull()
    expect(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts.start).toMatch(/scripts\/run-ts\.mjs src\/main\.ts$/)
    const docEnv = Object.fromEntries(start![1]!.trim().split(/\s+/).filter((s) => s !== "").map((kv) => kv.split("=") as [string, string]))
    expect(docEnv.CHAIN_PORT).toBe("8545")
    const dataDir = mkdtempSync(join(tmpdir(), "twinbook-quickstart-"))
    dirs.push(dataDir)
    chainPort = await freePort()
    service = await startChildServer({
      dataDir,
      startTimeoutMs: 120_000,
      env: { ...docEnv, CHAIN: "embedded", CHAIN_PORT: String(chainPort), DEPOSIT_PORT: "0", WEB: "false" }
    })
    const lineOf = async (prefix: string): Promise<string> => {
      for (;;) {
        const line = service!.lines.find((l) => l.startsWith(prefix))
        if (line !== undefined) return line
        await new Promise((r) => setTimeout(r, 20))
      }
    }
    const depositUrl = /^deposit service\s+(http:\/\/[^/\s]+)/.exec(await lineOf("deposit service"))![1]!
    const rpcUrl = /^deposit chain\s+(http:\/\/\S+) /.exec(await lineOf("deposit chain"))![1]!
    expect(rpcUrl).toBe(`http://127.0.0.1:${chainPort}`)
    const addresses = (code: string): string =>
      code.replaceAll("http://127.0.0.1:8080", service!.url).replaceAll("http://127.0.0.1:8081", depositUrl).replaceAll("http://127.0.0.1:8545", rpcUrl)

    // 2. Every other block, in order, in one environment.
    mkdirSync(OUT, { recursive: true })
    const work = mkdtempSync(join(tmpdir(), "twinbook-quickstart-shell-"))
    dirs.push(work)
    const state = join(work, "state.sh")
    writeFileSync(state, "")
    const exported = (): Record<string, string> => {
      const vars: Record<string, string> = {}
      for (const m of readFileSync(state, "utf8").matchAll(/^declare -x (\w+)="((?:[^"\\]|\\.)*)"$/gm)) vars[m[1]!] = m[2]!
      return vars
    }
    for (const block of blocks.slice(1)) {
      const code = addresses(block.code)
      let script: string
      let file: string | null = null
      if (block.lang === "sh") script = `set -euo pipefail\nsource "$QS_STATE"\n${code}\nexport -p > "$QS_STATE"\n`
      else {
        file = join(OUT, `${block.name}-${process.pid}.ts`)
        writeFileSync(file, `${code.replaceAll('"./src/', '"../../src/')}\nexport {}\n`)
        script = `set -euo pipefail\nsource "$QS_STATE"\nexec node --import tsx "${file}"\n`
      }
      const r = await runProcess("bash", ["-c", script], { cwd: ROOT, env: { ...baseEnv(), QS_STATE: state }, timeoutMs: 120_000 })
      if (file !== null) rmSync(file, { force: true })
      expect(r.status, `block ${block.name} failed:\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`).toBe(0)
      CHECKS[block.name]?.(r.stdout, exported())
    }
  }, 600_000)

  it("refuses a page with an unmarked command", () => {
    expect(() => quickstartBlocks("<!-- quickstart:a -->\n```sh\necho a\n```\n\n```ts\nconsole.log(1)\n```\n")).toThrow(/unmarked/)
    expect(quickstartBlocks("```text\nnot a command\n```\n<!-- quickstart:a -->\n```sh\necho a\n```\n")).toEqual([{ name: "a", lang: "sh", code: "echo a" }])
  })
})
