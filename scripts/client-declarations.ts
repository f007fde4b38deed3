// The client package's .d.ts. src/client/types.ts names each response shape as the
// `Schema.Schema.Type` of the API declaration's Effect Schema, and each request body and query
// as the declaration's (`RequestOf`, `QueryOf`: one source for server and client); shipping that would make `effect` (39 MB installed) a dependency of a client that never
// runs it. So before tsc emits the declarations, every such type in types.ts is replaced by the
// plain object type the checker resolves it to: the package's types are the same shapes with no
// import of effect. test/client/package.test.ts checks that each flattened type is identical to
// the repository's.
import { mkdirSync, writeFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import ts from "typescript"

const REPO = resolve(import.meta.dirname, "..")
const SRC = join(REPO, "src")
const TYPES_FILE = join(SRC, "client", "types.ts")
/** Modules whose only use in types.ts is inside `Schema.Schema.Type<…>`: their imports go once the types are flattened. */
const FLATTENED_IMPORTS = new Set(["effect", "../domain/wire.ts", "../api/declaration/dev.ts", "./declared.ts"])
/** The type references written out: the schemas' types, and the declaration's request and query types (src/client/declared.ts). */
const FLATTENED_TYPES = new Set(["Schema.Schema.Type", "RequestOf", "QueryOf"])

const compilerOptions = (): ts.CompilerOptions => {
  const parsed = ts.getParsedCommandLineOfConfigFile(join(REPO, "tsconfig.json"), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })
  if (parsed === undefined) throw new Error("cannot read tsconfig.json")
  return parsed.options
}

const describe = (diagnostics: ReadonlyArray<ts.Diagnostic>): string =>
  ts.formatDiagnostics(diagnostics, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => REPO, getNewLine: () => "\n" })

/** types.ts with every `Schema.Schema.Type<…>` written out as the type it resolves to, and the Effect imports gone. */
export const flattenedTypesSource = (program: ts.Program): string => {
  const sf = program.getSourceFile(TYPES_FILE)
  if (sf === undefined) throw new Error("src/client/types.ts is not in the client's program")
  const checker = program.getTypeChecker()
  const edits: Array<{ start: number; end: number; text: string }> = []
  const flags = ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.InTypeAlias | ts.TypeFormatFlags.UseSingleQuotesForStringLiteralType
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier) && FLATTENED_IMPORTS.has(node.moduleSpecifier.text)) {
      edits.push({ start: node.getFullStart(), end: node.getEnd(), text: "" })
      return
    }
    if (ts.isTypeReferenceNode(node) && FLATTENED_TYPES.has(node.typeName.getText(sf))) {
      edits.push({ start: node.getStart(sf), end: node.getEnd(), text: checker.typeToString(checker.getTypeFromTypeNode(node), node, flags) })
      return
    }
    ts.forEachChild(node, visit)
  }
  visit(sf)
  let text = sf.getFullText()
  for (const e of edits.sort((a, b) => b.start - a.start)) text = text.slice(0, e.start) + e.text + text.slice(e.end)
  return text
}

/** Relative module specifiers of a declaration file (imports, re-exports, `import("…")` types). */
const relativeSpecifiers = (dts: string): string[] =>
  [...dts.matchAll(/(?:from\s+|import\s*\(\s*)["'](\.{1,2}\/[^"']+)["']/g)].map((m) => m[1]!)

const withJsSpecifiers = (dts: string): string => dts.replace(/((?:from\s+|import\s*\(\s*)["']\.{1,2}\/[^"']+)\.ts(["'])/g, "$1.js$2")

/** Bare (package) specifiers of a declaration file. */
const packageSpecifiers = (dts: string): string[] =>
  [...dts.matchAll(/(?:from\s+|import\s*\(\s*)["']([^."'][^"']*)["']/g)].map((m) => m[1]!)

/**
 * Emits the declarations of `entries` (with types.ts flattened) and writes into `outDir` the
 * .d.ts files reachable from the entries, keeping their layout under src/ (so
 * `outDir/client/index.d.ts` is the entry's). Relative imports name the `.js` files the package
 * ships, the usual form (TypeScript 5.9 also resolves the sources' `.ts` in a declaration; not
 * every tool that reads .d.ts does). Throws when the declarations do not type-check or still
 * import a package.
 */
export const emitClientDeclarations = (entries: ReadonlyArray<string>, outDir: string): void => {
  const options = compilerOptions()
  const flattened = flattenedTypesSource(ts.createProgram(entries, options))
  // outDir only names the emitted files: they are collected in memory, and the reachable ones written.
  const emitOptions: ts.CompilerOptions = { ...options, noEmit: false, declaration: true, emitDeclarationOnly: true, rootDir: SRC, outDir }
  const host = ts.createCompilerHost(emitOptions)
  const getSourceFile = host.getSourceFile.bind(host)
  host.getSourceFile = (fileName, languageVersion, ...rest) =>
    resolve(fileName) === TYPES_FILE ? ts.createSourceFile(fileName, flattened, languageVersion, true) : getSourceFile(fileName, languageVersion, ...rest)
  const program = ts.createProgram(entries, emitOptions, host)
  const errors = ts.getPreEmitDiagnostics(program).filter((d) => d.category === ts.DiagnosticCategory.Error)
  if (errors.length > 0) throw new Error(`the client's declarations (types.ts flattened) do not type-check:\n${describe(errors)}`)
  const emitted = new Map<string, string>()
  // tsc keeps the sources' `.ts` specifiers in declarations; the package's files are `.js`/`.d.ts`.
  const result = program.emit(undefined, (fileName, text) => void emitted.set(resolve(fileName), withJsSpecifiers(text)))
  if (result.emitSkipped) throw new Error(`tsc emitted no declarations:\n${describe(result.diagnostics)}`)
  const problems: string[] = []
  const reachable = new Map<string, string>()
  const visit = (dtsPath: string): void => {
    if (reachable.has(dtsPath)) return
    const text = emitted.get(dtsPath)
    if (text === undefined) throw new Error(`no declaration emitted for src/${relative(outDir, dtsPath)}`)
    reachable.set(dtsPath, text)
    for (const spec of packageSpecifiers(text)) problems.push(`${relative(outDir, dtsPath)} imports the package ${spec}`)
    for (const spec of relativeSpecifiers(text)) visit(resolve(dirname(dtsPath), spec.replace(/\.js$/, ".d.ts")))
  }
  for (const entry of entries) visit(join(outDir, relative(SRC, entry)).replace(/\.ts$/, ".d.ts"))
  if (problems.length > 0) throw new Error(`the client's declarations import packages:\n  ${problems.join("\n  ")}`)
  for (const [path, text] of reachable) {
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, text)
  }
}
