// `node --import tsx scripts/scenario-reference.ts [--write | --check]`: the scenario field
// reference in docs/simulation.md, generated from the schema (sim/scenario/scenario-reference.ts). Prints
// it; `--write` replaces the part of docs/simulation.md between the markers; `--check` exits 1
// when that part differs (test/sim/scenario-reference.test.ts checks the same).
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { BEGIN, END, scenarioReference } from "../sim/scenario/scenario-reference.ts"

export const DOC = join(import.meta.dirname, "..", "docs", "simulation.md")

/** The generated part of the doc as it stands (markers included), or null without markers. */
export const referenceInDoc = (text: string): string | null => {
  const from = text.indexOf(BEGIN)
  const to = text.indexOf(END)
  return from < 0 || to < from ? null : text.slice(from, to + END.length)
}

const main = (argv: ReadonlyArray<string>): number => {
  const generated = scenarioReference()
  const text = readFileSync(DOC, "utf8")
  const current = referenceInDoc(text)
  if (argv.includes("--write")) {
    if (current === null) {
      process.stderr.write(`scenario-reference: ${DOC} has no markers (${BEGIN} … ${END})\n`)
      return 2
    }
    writeFileSync(DOC, text.replace(current, generated))
    process.stderr.write(`wrote ${DOC}\n`)
    return 0
  }
  if (argv.includes("--check")) {
    const same = current === generated
    process.stderr.write(same ? "docs/simulation.md: the scenario reference is current\n" : "docs/simulation.md: the scenario reference differs from the schema; run with --write\n")
    return same ? 0 : 1
  }
  process.stdout.write(`${generated}\n`)
  return 0
}

if (process.argv[1] !== undefined && import.meta.filename === process.argv[1]) process.exitCode = main(process.argv.slice(2))
