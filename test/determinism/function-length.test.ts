// Functions past 70 lines usually hide two jobs (issue 35 item 5): each one in src/, sim/,
// scripts/ and the web app is either split into named steps or carries a `// One piece: why`
// comment above its statement saying why it is one job. New long functions without one fail here.
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import ts from "typescript"
import { describe, expect, it } from "vitest"

const root = join(import.meta.dirname, "..", "..")
export const MAX_LINES = 70

const isFunction = (n: ts.Node): boolean =>
  ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n) || ts.isArrowFunction(n) || ts.isFunctionExpression(n) || ts.isConstructorDeclaration(n) || ts.isGetAccessor(n)

/** The statement (or class member) a function belongs to: where its comment goes. */
const statementOf = (n: ts.Node): ts.Node => {
  let s: ts.Node = n
  while (s.parent !== undefined && !ts.isSourceFile(s.parent) && !ts.isClassDeclaration(s.parent) && !ts.isBlock(s.parent) && !ts.isModuleBlock(s.parent)) s = s.parent
  return s
}

/** `file:line name (N lines)` for each function over MAX_LINES whose statement has no `One piece:` comment. */
export const uncommentedLongFunctions = (files: ReadonlyArray<string>): string[] =>
  files.flatMap((file) => {
    const text = readFileSync(file, "utf8")
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS)
    const out: string[] = []
    const visit = (n: ts.Node): void => {
      if (isFunction(n)) {
        const first = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line
        const lines = sf.getLineAndCharacterOfPosition(n.getEnd()).line - first + 1
        if (lines > MAX_LINES) {
          const stmt = statementOf(n)
          const comments = (ts.getLeadingCommentRanges(text, stmt.getFullStart()) ?? []).map((c) => text.slice(c.pos, c.end))
          if (!comments.some((c) => /One piece: \S/.test(c))) out.push(`${relative(root, file)}:${first + 1} (${lines} lines)`)
        }
      }
      ts.forEachChild(n, visit)
    }
    visit(sf)
    return out
  })

/** Every .ts and .tsx file under dir. */
const tsFiles = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => {
    const p = join(dir, n)
    return statSync(p).isDirectory() ? tsFiles(p) : /\.tsx?$/.test(n) ? [p] : []
  })
const allSources = (): string[] => [...tsFiles(join(root, "src")), ...tsFiles(join(root, "sim")), ...tsFiles(join(root, "scripts")), ...tsFiles(join(root, "web", "src")), join(root, "web", "server.ts")]

describe("function length", () => {
  it(`no function over ${MAX_LINES} lines without a "One piece:" comment saying why`, () => {
    const files = allSources()
    expect(files.some((f) => f.endsWith("deposit.tsx"))).toBe(true)
    expect(uncommentedLongFunctions(files)).toEqual([])
  })

  it("the rule catches a long function, a long method and a long inner arrow, and accepts the comment", () => {
    const f = join(mkdtempSync(join(tmpdir(), "fn-length-")), "x.ts")
    const body = Array.from({ length: MAX_LINES }, (_, i) => `  const v${i} = ${i}`).join("\n")
    writeFileSync(f, [
      `export const long = () => {\n${body}\n}`,
      `class C {\n  m(): void {\n${body}\n  }\n}`,
      `export const outer = () => {\n  const inner = () => {\n${body}\n  }\n  return inner\n}`,
      `// One piece: a test of the comment.\nexport const fine = () => {\n${body}\n}`,
      `export const short = () => 1`
    ].join("\n"))
    expect(uncommentedLongFunctions([f]).map((l) => l.replace(/^.*:(\d+) .*$/, "$1"))).toEqual(["1", "74", "147", "148"])
  })
})
