// The folders say the layering (DESIGN.md §5, docs/decisions.md § Composition root and use cases),
// and this holds them to it, like the engine's import guard beside it: the domain (src/service)
// knows no transport, store, feed or chain; the LP bot reaches the placement use case, never a
// route; use cases sit below the routes; only the entry point wires the runtime.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, relative, resolve } from "node:path"
import { describe, expect, it } from "vitest"
import { sourceFiles } from "./source-files.ts"

const root = join(import.meta.dirname, "..", "..")

export interface LayerRule {
  /** The folder whose files are checked, relative to the source root. */
  readonly from: string
  /** Folders (relative to the source root) it must not import from. */
  readonly never: ReadonlyArray<string>
  readonly why: string
}

export const RULES: ReadonlyArray<LayerRule> = [
  { from: "service", never: ["api", "store", "feed", "chain", "deposit", "runtime", "usecase"], why: "the domain around the engine: no transport, storage, feed or chain; ports are declared here and implemented outside" },
  { from: "lp", never: ["api", "runtime"], why: "the bot places orders through the use case, not a route" },
  { from: "usecase", never: ["api", "runtime", "feed", "store", "deposit"], why: "use cases sit below the routes and above the domain" },
  { from: "chain", never: ["api", "runtime", "usecase"], why: "the chain adapters know the domain, not the routes or the wiring" },
  { from: "api", never: ["runtime"], why: "routes are wired by the composition root, never the other way round" }
]

/** Every relative import/export-from/dynamic import of a file, resolved to a path under `srcRoot`. */
const importsOf = (file: string): string[] =>
  [...readFileSync(file, "utf8").matchAll(/(?:from\s+|import\s*\(\s*|import\s+)"(\.{1,2}\/[^"]+)"/g)].map((m) => resolve(dirname(file), m[1]!))

/** `file imports path (rule)` for each import that crosses a forbidden boundary. */
export const layeringViolations = (srcRoot: string, rules: ReadonlyArray<LayerRule> = RULES): string[] =>
  rules.flatMap((rule) =>
    sourceFiles(join(srcRoot, rule.from)).flatMap((file) =>
      importsOf(file).flatMap((target) => {
        const top = relative(srcRoot, target).split("/")[0]!
        return rule.never.includes(top) ? [`${relative(srcRoot, file)} imports ${relative(srcRoot, target)} (${rule.from} never imports ${top}: ${rule.why})`] : []
      })
    )
  )

describe("layering", () => {
  it("src/service, src/lp, src/usecase, src/chain and src/api import only what their layer may", () => {
    expect(sourceFiles(join(root, "src", "service")).length).toBeGreaterThan(0)
    expect(layeringViolations(join(root, "src"))).toEqual([])
  })

  it("inside src/, only the entry point (src/main.ts) imports the composition root", () => {
    const files = sourceFiles(join(root, "src")).filter((f) => !f.startsWith(join(root, "src", "runtime")) && f !== join(root, "src", "main.ts"))
    const bad = files.flatMap((f) => importsOf(f).filter((t) => t.startsWith(join(root, "src", "runtime") + "/")).map((t) => `${relative(root, f)} imports ${relative(root, t)}`))
    expect(bad).toEqual([])
  })

  it("the rule itself catches a crossing import, an export-from and a dynamic import, and passes a clean tree", () => {
    const src = mkdtempSync(join(tmpdir(), "layering-"))
    for (const dir of ["service", "api", "chain", "lp"]) mkdirSync(join(src, dir))
    writeFileSync(join(src, "api", "route.ts"), "export const r = 1\n")
    writeFileSync(join(src, "chain", "guard.ts"), "export class ChainGuard {}\n")
    writeFileSync(join(src, "service", "ok.ts"), 'import { x } from "./other.ts"\nimport type { E } from "../engine/types.ts"\n')
    expect(layeringViolations(src)).toEqual([])
    writeFileSync(join(src, "service", "exchange.ts"), 'import type { ChainGuard } from "../chain/guard.ts"\n')
    writeFileSync(join(src, "service", "again.ts"), 'export { r } from "../api/route.ts"\nconst m = await import("../chain/guard.ts")\n')
    writeFileSync(join(src, "lp", "bot.ts"), 'import { r } from "../api/route.ts"\n')
    expect(layeringViolations(src).map((v) => v.replace(/ \(.*$/, "")).sort()).toEqual([
      "lp/bot.ts imports api/route.ts",
      "service/again.ts imports api/route.ts",
      "service/again.ts imports chain/guard.ts",
      "service/exchange.ts imports chain/guard.ts"
    ])
  })
})
