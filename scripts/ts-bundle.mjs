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
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs"
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

// The checkout's own path is in the name: two checkouts sharing one node_modules (a worktree with a
// symlinked node_modules) must never take each other's bundle of the same entry for their own.
const ROOT_TAG = createHash("sha256").update(ROOT).digest("hex").slice(0, 8)
const bundleName = (entry) => `${relative(ROOT, entry).replace(/[\\/]/g, "__")}-${ROOT_TAG}`

/**
 * The record of a bundle whose inputs are all unchanged, else null: `{ out, chunks, inputs }`, `out`
 * the entry's file and `chunks` the files it may import later, relative to CACHE.
 */
const freshRecord = (inputsFile) => {
  let record
  try {
    record = JSON.parse(readFileSync(inputsFile, "utf8"))
  } catch {
    return null
  }
  if (typeof record?.out !== "string" || !Array.isArray(record.inputs) || !existsSync(join(CACHE, record.out))) return null
  for (const [path, size, mtimeMs] of record.inputs) {
    try {
      const s = statSync(path)
      if (s.size !== size || s.mtimeMs !== mtimeMs) return null
    } catch {
      return null
    }
  }
  return record
}

/** Writes a file by renaming a temporary one into place: another process never reads half of it. */
const writeWhole = (path, contents) => {
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}` // live-only: a unique temporary name
  writeFileSync(tmp, contents)
  renameSync(tmp, path)
}

/**
 * Removes what no bundle has used for a day: entry files of earlier builds, and chunks no current
 * bundle imports. A process started from an older build may still import one of its chunks later
 * (the docs page's), so nothing younger than a day goes.
 */
const prune = () => {
  const keep = new Set()
  for (const f of readdirSync(CACHE)) {
    if (!f.endsWith(".inputs.json")) continue
    try {
      const r = JSON.parse(readFileSync(join(CACHE, f), "utf8"))
      for (const o of [r.out, ...(r.chunks ?? [])]) keep.add(o)
    } catch {
      // a record being written, or an old format: its files age out like any other
    }
  }
  const dayAgoMs = Date.now() - 86_400_000 // live-only: the age of cache files
  for (const dir of ["", "chunks"]) {
    let names = []
    try {
      names = readdirSync(join(CACHE, dir))
    } catch {
      continue
    }
    for (const f of names) {
      const rel = dir === "" ? f : `${dir}/${f}`
      if (!f.endsWith(".mjs") || keep.has(rel)) continue
      try {
        if (statSync(join(CACHE, rel)).mtimeMs < dayAgoMs) unlinkSync(join(CACHE, rel))
      } catch {
        // gone already (another process pruned it)
      }
    }
  }
}

/**
 * The file URL of an up-to-date bundle of `entry` (an absolute path or one relative to the
 * repository), built first when missing or stale. The entry and the chunks it imports on demand
 * (`import()`: the docs page's Swagger UI, 1.9 MB, which no start should read) are named by their
 * content, so processes that build the same bundle at once write the same files, each whole.
 */
export const bundled = async (entry) => {
  const entryPath = resolve(ROOT, entry)
  const name = bundleName(entryPath)
  const inputsFile = join(CACHE, `${name}.inputs.json`)
  const fresh = freshRecord(inputsFile)
  if (fresh !== null) return pathToFileURL(join(CACHE, fresh.out)).href
  mkdirSync(join(CACHE, "chunks"), { recursive: true })
  const startedMs = Date.now() // live-only: compared with the inputs' mtimes (an edit during the build)
  // esbuild is loaded only to build: loading it took 0.1–0.2 s of CPU at every start.
  const { build } = await import("esbuild")
  const result = await build({
    entryPoints: [entryPath],
    absWorkingDir: ROOT,
    outdir: CACHE,
    entryNames: `${name}-[hash]`,
    chunkNames: "chunks/[name]-[hash]",
    outExtension: { ".js": ".mjs" },
    write: false,
    bundle: true,
    splitting: true,
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
  for (const f of result.outputFiles) if (!existsSync(f.path)) writeWhole(f.path, f.contents)
  // The entry's own output (an `import()` target is an entry point of its own chunk too).
  const files = Object.entries(result.metafile.outputs).map(([p, o]) => ({ rel: relative(CACHE, resolve(ROOT, p)), entry: o.entryPoint !== undefined && resolve(ROOT, o.entryPoint) === entryPath }))
  const out = files.find((f) => f.entry).rel
  const inputs = Object.keys(result.metafile.inputs).map((p) => {
    const path = resolve(ROOT, p)
    const s = statSync(path)
    return [path, s.size, s.mtimeMs]
  })
  // An input edited while the build read it may be in the bundle in its old form: use the bundle
  // this once, and record no inputs, so that the next start builds again.
  if (inputs.every(([, , mtimeMs]) => mtimeMs < startedMs)) {
    writeWhole(inputsFile, JSON.stringify({ out, chunks: files.filter((f) => !f.entry).map((f) => f.rel), inputs }))
    prune()
  }
  return pathToFileURL(join(CACHE, out)).href
}
