// docs/sdk.md's quickstart blocks: test/client/sdk-docs.test.ts runs them against src/client,
// test/client/package.test.ts against the packed and installed package.
import { readFileSync } from "node:fs"
import { join } from "node:path"

export const REPO = join(import.meta.dirname, "..", "..")
/** The package name the quickstarts import (packages/client/package.json). */
export const PACKAGE_NAME = "@twinbook/client"

/** The code block (```js or ```ts) following `<!-- sdk-quickstart:<name> -->` in docs/sdk.md. */
export const quickstart = (name: string): string => {
  const doc = readFileSync(join(REPO, "docs", "sdk.md"), "utf8")
  const m = new RegExp(`<!-- sdk-quickstart:${name} -->\\n\`\`\`(?:js|ts)\\n([\\s\\S]*?)\\n\`\`\``).exec(doc)
  if (m === null) throw new Error(`docs/sdk.md has no sdk-quickstart:${name} block`)
  return m[1]!
}

/** The block with its package imports pointed at the repository's sources, from a file `depth` folders below the root. */
export const quickstartFromSource = (name: string, depth: number): string => {
  const up = "../".repeat(depth)
  return quickstart(name).replaceAll(`"${PACKAGE_NAME}/node"`, `"${up}src/client/node.ts"`).replaceAll(`"${PACKAGE_NAME}"`, `"${up}src/client/index.ts"`)
}
