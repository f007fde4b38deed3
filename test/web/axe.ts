// axe-core (Deque's accessibility engine, the npm package) run inside the page under test: the
// browser journeys check every page of the web app at 0 serious or critical violations.
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import type { Page } from "playwright-core"

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

interface AxeNode { readonly target: ReadonlyArray<unknown>; readonly failureSummary?: string; readonly html: string }
export interface AxeViolation { readonly id: string; readonly impact: string | null; readonly help: string; readonly helpUrl: string; readonly nodes: ReadonlyArray<AxeNode> }

/** The page's serious and critical violations (axe-core's WCAG 2.x A/AA rules and best practices). */
export const seriousViolations = async (page: Page): Promise<AxeViolation[]> => {
  // The app routes on the hash, so the script stays in the document across pages: inject it once.
  if (!(await page.evaluate(() => "axe" in globalThis))) await page.addScriptTag({ content: AXE_SOURCE })
  const result = (await page.evaluate(() => {
    const g = globalThis as any // the page's window (this file compiles without the DOM types)
    return g.axe.run(g.document, { resultTypes: ["violations"] })
  })) as { violations: AxeViolation[] }
  return result.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
}

/** One line per violation and up to five of its elements, for the failure message. */
export const describeViolations = (violations: ReadonlyArray<AxeViolation>): string =>
  violations
    .map((v) => [`${v.impact} ${v.id}: ${v.help} (${v.helpUrl})`, ...v.nodes.slice(0, 5).map((n) => `    ${n.target.join(" ")} — ${(n.failureSummary ?? "").replace(/\s+/g, " ")}`)].join("\n"))
    .join("\n")
