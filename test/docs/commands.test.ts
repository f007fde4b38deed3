// Every shell command README.md and docs/ show, checked against the repository as it is: each
// ```sh / ```bash block is split into commands, and each `npm run` command must name a script of
// package.json, put `-s` before a pipe (npm's own banner lines would reach `jq` otherwise), use
// only options its program's `--help` lists (asked once per program, exit 0), name a bench suite
// that exists, and point at scenario and fixture files that exist. docs/quickstart.md's blocks
// are run as written by test/docs/quickstart.test.ts; here the backtests of the shipped sample run
// as written too (RUNS); the rest are checked, not run (they need a tape, a
// NATS host, a running service or minutes to hours of simulation), and a block that cannot even be
// checked says why in a `<!-- docs-commands: not checked: … -->` line before it.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { runProcess } from "../support/run-process.ts"

const ROOT = join(import.meta.dirname, "..", "..")
const SCRIPTS = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts

export interface DocCommand {
  readonly file: string
  readonly line: number
  readonly text: string
}

/** The commands of a page's shell blocks, one per line (comments dropped); blocks marked "not checked" and quickstart blocks left out. */
export const docCommands = (file: string, doc: string): DocCommand[] => {
  const out: DocCommand[] = []
  const fence = /(<!--[^\n]*-->\n)?```(?:sh|bash|shell)\n([\s\S]*?)\n```/g
  for (const m of doc.matchAll(fence)) {
    const marker = m[1] ?? ""
    if (/quickstart:|docs-commands: not checked: \S/.test(marker)) continue
    const first = doc.slice(0, m.index).split("\n").length + 1
    m[2]!.split("\n").forEach((raw, i) => {
      const text = raw.replace(/\s+#.*$/, "").replace(/^#.*$/, "").trim()
      if (text !== "") out.push({ file, line: first + i, text })
    })
  }
  return out
}

/** `npm run [-s] <script> [-- args…]`, after any `VAR=value` prefixes; null for another program. */
export const npmRun = (text: string): { script: string; silent: boolean; args: string[]; piped: boolean } | null => {
  const [command, ...pipes] = text.replace(/\s*&$/, "").split(/\s\|\s/)
  const words = command!.trim().split(/\s+/).filter((w) => !/^[A-Z_][A-Z0-9_]*=/.test(w))
  const start = words.findIndex((w) => w === "npm")
  if (start < 0 || words[start + 1] !== "run") return null
  let i = start + 2
  let silent = false
  while (words[i]?.startsWith("-") === true) silent ||= words[i++] === "-s"
  const script = words[i++] ?? ""
  const rest = words.slice(i)
  return { script, silent, args: rest[0] === "--" ? rest.slice(1) : rest, piped: pipes.length > 0 }
}

/** Options (`--x`, `--x=v`) and bracketed optional syntax (`[--concurrency 2]`) as plain options. */
const optionsOf = (args: ReadonlyArray<string>): string[] =>
  args.map((a) => a.replace(/^\[+/, "").replace(/\]+$/, "")).filter((a) => /^--?[a-z]/.test(a)).map((a) => a.split("=")[0]!)

/** What is wrong with one command, given each script's --help text ("" for a script without one). */
export const problemsOf = (c: DocCommand, help: (script: string) => string): string[] => {
  const run = npmRun(c.text)
  if (run === null) return []
  const at = `${c.file}:${c.line} ${c.text}`
  if (run.script === "") return [`${at}: "npm run" needs a script`]
  if (!Object.hasOwn(SCRIPTS, run.script)) return [`${at}: no script "${run.script}" in package.json`]
  const out: string[] = []
  if (run.piped && !run.silent) out.push(`${at}: a pipe needs "npm run -s" (npm's banner lines would go down the pipe)`)
  const usage = help(run.script)
  for (const option of optionsOf(run.args)) if (!new RegExp(`(^|[\\s\\[|(])${option}(?![\\w-])`).test(usage)) out.push(`${at}: ${option} is not an option of npm run ${run.script} (its --help does not list it)`)
  if (run.script === "bench") {
    const suite = run.args.find((a) => !a.startsWith("-"))
    if (suite !== undefined && !usage.includes(suite)) out.push(`${at}: no bench suite "${suite}"`)
  }
  for (const path of run.args.filter((a) => /^(scenarios|fixtures)\//.test(a))) if (!existsSync(join(ROOT, path))) out.push(`${at}: ${path} does not exist`)
  return out
}

const PAGES = ["README.md", ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md") && f !== "quickstart.md").map((f) => `docs/${f}`)]
const commands = PAGES.flatMap((p) => docCommands(p, readFileSync(join(ROOT, p), "utf8")))
const scripts = [...new Set(commands.map((c) => npmRun(c.text)?.script).filter((s): s is string => s !== undefined && Object.hasOwn(SCRIPTS, s)))]
const helps = new Map<string, { code: number | null; text: string }>()

beforeAll(async () => {
  // One program at a time: each is a Node start with tsx.
  for (const s of scripts) {
    if (s === "test" || s === "start") continue
    const r = await runProcess("npm", ["run", "-s", s, "--", "--help"], { cwd: ROOT, timeoutMs: 120_000 })
    helps.set(s, { code: r.status, text: r.stdout + r.stderr })
  }
}, 600_000)

describe("the shell commands of README.md and docs/", () => {
  it("are found: every page's blocks, dozens of npm run commands", () => {
    expect(commands.filter((c) => npmRun(c.text) !== null).length).toBeGreaterThan(40)
    expect(new Set(commands.map((c) => c.file)).size).toBeGreaterThanOrEqual(4)
  })

  it("each program answers --help with its usage, exit 0", () => {
    for (const [s, h] of helps) {
      expect(h.code, `npm run ${s} -- --help:\n${h.text}`).toBe(0)
      expect(h.text, s).toMatch(/usage/i)
    }
  })

  it("name scripts that exist, options their program lists, suites and files that exist, and -s before a pipe", () => {
    const problems = commands.flatMap((c) => problemsOf(c, (s) => helps.get(s)?.text ?? ""))
    expect(problems).toEqual([])
  })

  // The documented commands that finish in seconds run as written (their output sent to a temp
  // folder, so they never race another test over out/): the shipped sample, in each page that shows it.
  const RUNS = [
    "npm run backtest",
    "npm run backtest -- --preset aggressive --capital 5000 --queue prob --json"
  ]
  it.each(RUNS)("runs as written: %s", async (text) => {
    expect(commands.some((c) => c.text === text), `${text} is on a page`).toBe(true)
    const run = npmRun(text)!
    const out = mkdtempSync(join(tmpdir(), "docs-command-"))
    try {
      const r = await runProcess("npm", ["run", "-s", run.script, "--", ...run.args, "--out", out, "--no-html"], { cwd: ROOT, timeoutMs: 600_000 })
      expect(r.status, `${text}\n${r.stderr.slice(-2000)}`).toBe(0)
      expect(existsSync(join(out, "backtest.duckdb"))).toBe(true)
      if (run.args.includes("--json")) expect(JSON.parse(r.stdout.trim().split("\n").at(-1)!)).toHaveProperty("summary")
    } finally {
      rmSync(out, { recursive: true, force: true })
    }
  }, 600_000)

  it("would catch what was once documented: a missing option, a pipe without -s, npm ci", () => {
    const help = (s: string): string => helps.get(s)?.text ?? ""
    const wrong = (text: string): string[] => problemsOf({ file: "x.md", line: 1, text }, help)
    expect(wrong("npm run backtest -- --book-only")).toEqual([expect.stringContaining("--book-only is not an option of npm run backtest")])
    expect(wrong("npm run fidelity -- --json | jq .coverage")).toEqual([expect.stringContaining('a pipe needs "npm run -s"')])
    expect(wrong("npm run -s fidelity -- --json | jq .coverage")).toEqual([])
    expect(wrong("npm run sim -- scenarios/no-such.json")).toEqual([expect.stringContaining("does not exist")])
    expect(wrong("npm run bench -- nosuchsuite")).toEqual([expect.stringContaining('no bench suite "nosuchsuite"')])
    // `npm ci` fails with this project's lockfile (README.md): no page may tell anyone to run it.
    const ci = PAGES.flatMap((p) => readFileSync(join(ROOT, p), "utf8").split("\n").map((l, i) => ({ p, i, l }))).filter(({ l }) => /`npm ci`|^\s*npm ci\b/.test(l) && !/not `npm ci`|why not `npm ci`|makes `npm ci` fail/.test(l))
    expect(ci.map(({ p, i, l }) => `${p}:${i + 1} ${l}`)).toEqual([])
  })
})
