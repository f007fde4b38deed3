// `npm run docs:config [-- --check]`: writes the variable tables of README.md and docs/cluster.md
// from the declared configuration (src/runtime/config.ts), between their marker lines; `--check`
// writes nothing and exits 1 when a table differs (test/docs/config-table.test.ts holds the same).
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { BEGIN_MARKER, END_MARKER, TABLE_FILES, withTable } from "../src/runtime/config.ts"

const USAGE = "usage: npm run docs:config [-- --check]   (writes README.md's and docs/cluster.md's variable tables from src/runtime/config.ts; --check only compares, exit 1 on a difference)"
const ROOT = join(import.meta.dirname, "..")

const main = (argv: ReadonlyArray<string>): number => {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(`${USAGE}\n`)
    return 0
  }
  const unknown = argv.filter((a) => a !== "--check")
  if (unknown.length > 0) {
    process.stderr.write(`docs:config: unknown argument ${unknown[0]}\n${USAGE}\n`)
    return 2
  }
  const check = argv.includes("--check")
  let stale = 0
  for (const { file, table } of TABLE_FILES) {
    const path = join(ROOT, file)
    const doc = readFileSync(path, "utf8")
    const next = withTable(doc, table)
    if (next === null) {
      process.stderr.write(`docs:config: ${file} has no generated table: put the lines\n${BEGIN_MARKER}\n${END_MARKER}\nwhere it goes\n`)
      return 1
    }
    if (next === doc) continue
    stale++
    if (check) process.stderr.write(`docs:config: ${file}'s variable table differs from src/runtime/config.ts (run npm run docs:config)\n`)
    else {
      writeFileSync(path, next)
      process.stdout.write(`docs:config: wrote ${file}'s variable table\n`)
    }
  }
  return check && stale > 0 ? 1 : 0
}

process.exitCode = main(process.argv.slice(2))
