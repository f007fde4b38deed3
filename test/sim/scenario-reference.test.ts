// docs/simulation.md "Scenarios" cannot drift from the schema (issue 34 item 14): its field
// reference is the one generated from sim/scenario/scenario.ts (every block, every agent kind's and fault
// kind's fields, the clock block), and its table of shipped scenarios names every scenarios/*.json.
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { scenarioReference } from "../../sim/scenario/scenario-reference.ts"
import { DOC, referenceInDoc } from "../../scripts/scenario-reference.ts"

const root = join(import.meta.dirname, "..", "..")
const doc = readFileSync(DOC, "utf8")

describe("docs/simulation.md scenario reference", () => {
  it("is the reference generated from the schema (node --import tsx scripts/scenario-reference.ts --write)", () => {
    expect(referenceInDoc(doc)).toBe(scenarioReference())
  })

  it("the generated reference covers each agent kind's and fault kind's own fields and the clock block", () => {
    const ref = scenarioReference()
    for (const kind of ["noise", "informed", "market_maker", "lp_strategy", "lp_bot", "careless", "spammer"]) expect(ref).toContain(`**\`agents[]\` \`"kind": "${kind}"\`**`)
    expect(ref).toMatch(/\| `edge_bps` \| integer 0–5000 \| `200` \|/)
    expect(ref).toMatch(/\| `rate_pct` \| number 0–100 \| \*\*required\*\* \|/)
    expect(ref).toMatch(/\| `until_takeover` \| boolean \| `false` \|/)
    for (const block of ["clock", "clock.steps[]", "clock.random", "storage", "cluster", "markets.jumps"]) expect(ref).toContain(`**\`${block}\`**`)
    expect(ref).toMatch(/\| `revert_after` \| duration \| 60 s \|/)
  })

  it("the table of shipped scenarios names every scenarios/*.json", () => {
    const lines = doc.split("\n")
    const start = lines.findIndex((l) => l.startsWith("| shipped scenario |"))
    const end = lines.findIndex((l, i) => i > start && !l.startsWith("|"))
    const names = lines.slice(start + 2, end).flatMap((l) => [...l.split(" | ")[0]!.matchAll(/`([\w-]+)`/g)].map((m) => m[1]!))
    // "`liquidity-midnight-fees`, `-volatile`, `-informed`": the later ones share the first one's stem.
    let stem = ""
    const full = names.map((n) => {
      if (n.startsWith("-")) return stem + n
      stem = n.replace(/-[^-]+$/, "")
      return n
    })
    const files = readdirSync(join(root, "scenarios")).filter((f) => f.endsWith(".json")).map((f) => f.replace(/\.json$/, ""))
    expect(full.sort()).toEqual(files.sort())
  })
})
