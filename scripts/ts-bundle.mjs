// Runs twinbook's TypeScript entry points as one bundled ES module each instead of through tsx's
// loader hooks (docs/decisions.md "Starting a TypeScript process"). tsx resolves and loads every
// module of node_modules through hooks on a second thread: a process importing the service's
// graph spent about 4 s of CPU starting, a bundle of the same graph 0.7 s; the test suite starts
// hundreds of processes and worker threads. Plain JS on purpose: it is what loads TypeScript.
//
// A bundle is rebuilt whenever any file it was built from changed (size or mtime), so an edit
// shows at the next start, as under tsx. The repository's own files keep their meaning of
// `import.meta.url`, `import.meta.dirname` and `import.meta.filename` (their source location,
// not the bundle's). Dependencies that are native, optional or locate files beside themselves
// stay external and load from node_modules as usual.
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { pathToFileURL } from "node:url"

const ROOT = resolve(import.meta.dirname, "..")
const CACHE = join(ROOT, "node_modules", ".cache", "twinbook-bundles")

/** Pure-JS dependencies worth bundling (most of a process's start-up); the rest stay external. */
const BUNDLED = [/^effect(\/|$)/, /^@effect\//, /^viem(\/|$)/, /^ox(\/|$)/, /^abitype(\/|$)/, /^@noble\//, /^@scure\//, /^@nats-io\//, /^bs58(\/|$)/, /^base-x(\/|$)/]

/** Leaves every bare import not in BUNDLED to node_modules at run time. */
const externals = {
  name: "twinbook-externals",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith("node:") || !BUNDLED.some((re) => re.test(args.path))) return { path: args.path, external: true }
      return undefined
    })
  }
}

/** The repository's sources keep their own location in `import.meta` (paths to data, workers, packages). */
const ownImportMeta = {
  name: "twinbook-import-meta",
  setup(b) {
    b.onLoad({ filter: /\.(ts|tsx|mts|js|mjs)$/ }, (args) => {
      if (args.path.includes(`${"/"}node_modules${"/"}`)) return undefined
      const text = readFileSync(args.path, "utf8")
      const contents = text
        .replaceAll("import.meta.dirname", JSON.stringify(dirname(args.path)))
        .replaceAll("import.meta.filename", JSON.stringify(args.path))
        .replaceAll("import.meta.url", JSON.stringify(pathToFileURL(args.path).href))
      const loader = args.path.endsWith(".tsx") ? "tsx" : args.path.endsWith(".ts") || args.path.endsWith(".mts") ? "ts" : "js"
      return { contents, loader, resolveDir: dirname(args.path) }
    })
  }
}

const bundleName = (entry) => relative(ROOT, entry).replace(/[\\/]/g, "__") + ".mjs"

/** The inputs list of a bundle whose inputs are all unchanged, else null. */
const freshInputs = (inputsFile) => {
  let inputs
  try {
    inputs = JSON.parse(readFileSync(inputsFile, "utf8"))
  } catch {
    return null
  }
  for (const [path, size, mtimeMs] of inputs) {
    try {
      const s = statSync(path)
      if (s.size !== size || s.mtimeMs !== mtimeMs) return null
    } catch {
      return null
    }
  }
  return inputs
}

/**
 * The file URL of an up-to-date bundle of `entry` (an absolute path or one relative to the
 * repository), built first when missing or stale. Safe when processes build the same one at once:
 * each writes its own temporary files and renames them into place.
 */
export const bundled = async (entry) => {
  const entryPath = resolve(ROOT, entry)
  const out = join(CACHE, bundleName(entryPath))
  const inputsFile = `${out}.inputs.json`
  if (existsSync(out) && freshInputs(inputsFile) !== null) return pathToFileURL(out).href
  mkdirSync(CACHE, { recursive: true })
  const startedMs = Date.now() // live-only: compared with the inputs' mtimes (an edit during the build)
  const tmp = `${out}.${process.pid}.${Math.random().toString(36).slice(2)}` // live-only: a unique temporary name
  // esbuild is loaded only to build: loading it took 0.1–0.2 s of CPU at every start.
  const { build } = await import("esbuild")
  const result = await build({
    entryPoints: [entryPath],
    outfile: `${tmp}.mjs`,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    jsx: "automatic",
    metafile: true,
    logLevel: "error",
    legalComments: "none",
    // CommonJS code inside bundled packages calls require: give the bundle one.
    banner: { js: 'import { createRequire as __twinbookRequire } from "node:module"; const require = __twinbookRequire(import.meta.url);' },
    plugins: [externals, ownImportMeta]
  })
  const inputs = Object.keys(result.metafile.inputs).map((p) => {
    const path = resolve(ROOT, p)
    const s = statSync(path)
    return [path, s.size, s.mtimeMs]
  })
  renameSync(`${tmp}.mjs`, out)
  // An input edited while the build read it may be in the bundle in its old form: use the bundle
  // this once, and record no inputs, so that the next start builds again.
  if (inputs.every(([, , mtimeMs]) => mtimeMs < startedMs)) {
    writeFileSync(`${tmp}.json`, JSON.stringify(inputs))
    renameSync(`${tmp}.json`, inputsFile)
  }
  return pathToFileURL(out).href
}
