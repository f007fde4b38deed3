// The browser entry of the client (src/client/index.ts) and everything it imports must
// load in a browser: no node: module, no Node builtin, no Buffer/process/require, and
// only packages known to be browser-safe. A walk of the static import graph.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { builtinModules } from "node:module"
import { dirname, join, relative, resolve } from "node:path"
import { describe, expect, it } from "vitest"

const root = join(import.meta.dirname, "..", "..")
/** Packages the client may import in a browser (pure JS, no Node APIs). */
const BROWSER_SAFE_PACKAGES = [/^@noble\/ed25519$/, /^@noble\/hashes\/[a-z0-9_.]+\.js$/, /^bs58$/]
const NODE_GLOBALS = [/\bBuffer\s*[.(]/, /\bprocess\s*\./, /\brequire\s*\(/, /\b__dirname\b/]

const stripComments = (src: string): string => src.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:])\/\/.*$/gm, "$1")

/** The files of the import graph from `entry`, and every problem in it as "file: problem" lines. */
export const walk = (entry: string): { files: string[]; problems: string[] } => {
  const problems: string[] = []
  const seen = new Set<string>()
  const visit = (file: string): void => {
    if (seen.has(file)) return
    seen.add(file)
    const src = stripComments(readFileSync(file, "utf8"))
    const name = relative(root, file)
    for (const re of NODE_GLOBALS) if (re.test(src)) problems.push(`${name}: uses ${re.source}`)
    // `import type` / `export type` are erased when compiled: nothing they name reaches the bundle
    // (src/client/types.ts is such a module: its types come from Effect Schemas).
    const code = src.replace(/(?:^|\s)(?:import|export)\s+type\s[^"']*?from\s+["'][^"']+["']/gm, "")
    const specs = [...code.matchAll(/(?:^|\s)(?:import|export)\s[^"']*?from\s+["']([^"']+)["']|import\s*\(\s*["']([^"']+)["']\s*\)|^import\s+["']([^"']+)["']/gm)].map(
      (m) => (m[1] ?? m[2] ?? m[3])!
    )
    for (const spec of specs) {
      if (spec.startsWith(".")) visit(resolve(dirname(file), spec))
      else if (spec.startsWith("node:") || builtinModules.includes(spec)) problems.push(`${name}: imports ${spec}`)
      else if (!BROWSER_SAFE_PACKAGES.some((re) => re.test(spec))) problems.push(`${name}: imports package ${spec}, not known browser-safe`)
    }
  }
  visit(entry)
  return { files: [...seen].map((f) => relative(root, f)), problems }
}

describe("browser safety of the client", () => {
  it("src/client/index.ts and its whole import graph use no Node module or global", () => {
    const { files, problems } = walk(join(root, "src", "client", "index.ts"))
    expect(problems).toEqual([])
    // Not vacuous: the walk reads the graph, including the message builders shared with the server.
    expect(files).toEqual(
      expect.arrayContaining(["src/client/index.ts", "src/client/api-client.ts", "src/client/feed.ts", "src/client/keys.ts", "src/auth/messages.ts"])
    )
  })

  it("flags a node: import and a Node global: the Node entry's fast signer, and a file like messages.ts was", () => {
    expect(walk(join(root, "src", "client", "node.ts")).problems).toEqual(["src/client/keys-node.ts: uses \\bBuffer\\s*[.(]", "src/client/keys-node.ts: imports node:crypto"])
    const dir = mkdtempSync(join(tmpdir(), "browser-safety-"))
    writeFileSync(join(dir, "entry.ts"), 'export * from "./messages.ts"\n')
    writeFileSync(join(dir, "messages.ts"), 'import { createHash } from "node:crypto"\nexport const m = (s: string) => Buffer.from(s, "utf8")\n')
    expect(walk(join(dir, "entry.ts")).problems.map((p) => p.replace(/^.*messages\.ts: /, ""))).toEqual(["uses \\bBuffer\\s*[.(]", "imports node:crypto"])
  })
})
