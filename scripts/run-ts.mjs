// `node scripts/run-ts.mjs <entry.ts> [args…]`: runs a TypeScript entry point from its bundle
// (scripts/ts-bundle.mjs), as the npm scripts do. The entry sees the arguments and
// `process.argv[1]` it would see when started directly.
import { resolve } from "node:path"
import { bundled } from "./ts-bundle.mjs"

const [entry, ...rest] = process.argv.slice(2)
if (entry === undefined) {
  process.stderr.write("usage: node scripts/run-ts.mjs <entry.ts> [args…]\n")
  process.exit(2)
}
const entryPath = resolve(process.cwd(), entry)
const url = await bundled(entryPath)
process.argv.splice(1, process.argv.length - 1, entryPath, ...rest)
await import(url)
