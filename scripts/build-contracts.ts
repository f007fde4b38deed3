// `npm run build:contracts`: compiles contracts/*.sol offline (bundled solc-js) and writes
// contracts/artifacts/<Name>.json and contracts/artifacts/abis.ts. Commit the result: tests and
// start-up use the committed artifacts and never compile.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { ARTIFACTS_DIR, compileContracts, renderArtifacts } from "../contracts/compile.ts"

const compilation = compileContracts()
for (const w of compilation.warnings) process.stderr.write(`${w}\n`)
const files = renderArtifacts(compilation)
mkdirSync(ARTIFACTS_DIR, { recursive: true })
let changed = 0
for (const [name, content] of files) {
  const path = join(ARTIFACTS_DIR, name)
  let old: string | null = null
  try {
    old = readFileSync(path, "utf8")
  } catch {
    old = null
  }
  if (old !== content) {
    writeFileSync(path, content)
    changed++
  }
}
// Artifacts of contracts that no longer exist would look current; remove them.
for (const name of readdirSync(ARTIFACTS_DIR)) {
  if (!files.has(name)) {
    rmSync(join(ARTIFACTS_DIR, name))
    changed++
  }
}
process.stdout.write(`solc ${compilation.compilerVersion}: ${files.size} artifacts in contracts/artifacts (${changed} changed)\n`)
