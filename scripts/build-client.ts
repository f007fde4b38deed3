// Builds the client SDK as a package (packages/client; docs/sdk.md "Install as a package"):
// esbuild bundles src/client/index.ts (browser-safe) and src/client/node.ts to ESM sharing one
// chunk, with every package left external (they are the package's dependencies); tsc emits the
// declarations. `npm run build:client` builds packages/client/dist; test/client/package.test.ts
// builds a copy of the package in a temporary folder, packs it and installs the tarball.
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { build, type Metafile } from "esbuild"
import { emitClientDeclarations } from "./client-declarations.ts"

export const REPO = resolve(import.meta.dirname, "..")
export const PACKAGE_DIR = join(REPO, "packages", "client")
const ENTRIES = { index: join(REPO, "src", "client", "index.ts"), node: join(REPO, "src", "client", "node.ts") }

interface Manifest {
  readonly name: string
  readonly version: string
  readonly engines?: Record<string, string>
  readonly dependencies?: Record<string, string>
}
const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, "utf8")) as T

/** The package name of an import specifier: `@noble/hashes/sha2.js` → `@noble/hashes`. */
const packageOf = (spec: string): string => spec.split("/").slice(0, spec.startsWith("@") ? 2 : 1).join("/")

/**
 * The package's manifest must follow the root's: the same version and Node range, and each
 * dependency pinned to the version the root pins (so the package runs on exactly what the
 * repository tests).
 */
export const checkManifest = (pkg: Manifest = readJson(join(PACKAGE_DIR, "package.json")), root: Manifest = readJson(join(REPO, "package.json"))): string[] => {
  const problems: string[] = []
  if (pkg.version !== root.version) problems.push(`version ${pkg.version} is not the root's ${root.version}`)
  if (pkg.engines?.["node"] !== root.engines?.["node"]) problems.push(`engines.node ${pkg.engines?.["node"]} is not the root's ${root.engines?.["node"]}`)
  for (const [name, version] of Object.entries(pkg.dependencies ?? {})) {
    const pinned = root.dependencies?.[name]
    if (pinned !== version) problems.push(`dependency ${name}@${version} is not the root's ${name}@${pinned ?? "(none)"}`)
  }
  return problems
}

/**
 * What the bundle imports from outside itself must be exactly the package's dependencies (plus
 * `node:` modules, reachable only from the Node entry): a forgotten dependency would fail at the
 * consumer's import, an unused one is weight.
 */
export const checkExternals = (meta: Metafile, dependencies: ReadonlyArray<string>): string[] => {
  const problems: string[] = []
  const used = new Set<string>()
  const reach = (output: string, seen = new Set<string>()): Set<string> => {
    if (seen.has(output)) return seen
    seen.add(output)
    for (const imp of meta.outputs[output]?.imports ?? []) if (!imp.external) reach(imp.path, seen)
    return seen
  }
  for (const [output, info] of Object.entries(meta.outputs)) {
    for (const imp of info.imports) {
      if (!imp.external) continue
      if (imp.path.startsWith("node:")) continue
      const name = packageOf(imp.path)
      used.add(name)
      if (!dependencies.includes(name)) problems.push(`${output} imports ${imp.path}, not a dependency of the package`)
    }
  }
  for (const name of dependencies) if (!used.has(name)) problems.push(`dependency ${name} is not imported by the bundle`)
  const browserEntry = Object.keys(meta.outputs).find((o) => o.endsWith("/index.js"))!
  for (const output of reach(browserEntry)) {
    for (const imp of meta.outputs[output]!.imports) if (imp.external && imp.path.startsWith("node:")) problems.push(`the browser entry reaches ${imp.path} (through ${output})`)
  }
  return problems
}

/** Bundles the two entries into `distDir` (ESM, ES2022, one shared chunk, not minified: the consumer's bundler minifies). */
const bundle = async (distDir: string, pkg: Manifest): Promise<Metafile> => {
  const result = await build({
    entryPoints: Object.entries(ENTRIES).map(([out, input]) => ({ in: input, out })),
    outdir: distDir,
    bundle: true,
    splitting: true, // one copy of the shared code: ApiFailure's instanceof and the per-key proof timestamps hold across both entries
    chunkNames: "chunks/[name]-[hash]",
    format: "esm",
    platform: "neutral",
    target: "es2022",
    packages: "external",
    metafile: true,
    logLevel: "warning",
    banner: { js: `// ${pkg.name} ${pkg.version}: built from the twinbook repository's src/client (scripts/build-client.ts)` }
  })
  return result.metafile
}

/**
 * Builds the package's dist/ into `distDir` (packages/client/dist by default): into a private
 * folder first, then swapped in with renames, so two builds at once never leave half a dist.
 * Throws, listing every problem, when the manifest or the bundle's imports are not as they must be.
 */
export const buildClient = async (distDir: string = join(PACKAGE_DIR, "dist"), manifestPath: string = join(PACKAGE_DIR, "package.json")): Promise<{ distDir: string; metafile: Metafile }> => {
  const pkg = readJson<Manifest>(manifestPath)
  const manifestProblems = checkManifest(pkg)
  if (manifestProblems.length > 0) throw new Error(`${relative(REPO, manifestPath)}:\n  ${manifestProblems.join("\n  ")}`)
  const target = resolve(distDir)
  const fresh = `${target}.build-${process.pid}`
  rmSync(fresh, { recursive: true, force: true })
  mkdirSync(fresh, { recursive: true })
  try {
    const metafile = await bundle(fresh, pkg)
    const problems = checkExternals(metafile, Object.keys(pkg.dependencies ?? {}))
    if (problems.length > 0) throw new Error(`the client bundle:\n  ${problems.join("\n  ")}`)
    emitClientDeclarations(Object.values(ENTRIES), join(fresh, "types"))
    const old = `${target}.old-${process.pid}`
    if (existsSync(target)) renameSync(target, old)
    renameSync(fresh, target)
    rmSync(old, { recursive: true, force: true })
    return { distDir: target, metafile }
  } finally {
    rmSync(fresh, { recursive: true, force: true })
  }
}

/** A copy of the package (manifest, README, fresh dist/) in `dir`, ready for `npm pack`. */
export const stageClientPackage = async (dir: string): Promise<string> => {
  mkdirSync(dir, { recursive: true })
  for (const f of ["package.json", "README.md"]) cpSync(join(PACKAGE_DIR, f), join(dir, f))
  await buildClient(join(dir, "dist"), join(dir, "package.json"))
  return dir
}

if (process.argv[1] !== undefined && import.meta.filename === resolve(process.argv[1])) {
  const args = process.argv.slice(2)
  const usage = "usage: npm run build:client   (bundles src/client into packages/client/dist: ESM and .d.ts; then npm pack in packages/client)"
  if (args.includes("--help") || args.includes("-h")) console.log(usage)
  else if (args.length > 0) {
    console.error(`build:client: takes no arguments (got ${args.join(" ")})\n${usage}`)
    process.exitCode = 2
  } else {
    const { distDir } = await buildClient()
    console.log(`built ${relative(REPO, distDir)} (${relative(REPO, dirname(distDir))}: npm pack there)`)
  }
}
