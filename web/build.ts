// Builds the web app (Vite) into web/dist, or into `outDir`. `npm install` runs it (postinstall,
// only when stale, and never failing the install), `npm start` runs it when web/dist is missing
// or older than its sources, and the browser tests build into a temporary folder of their own.
import { existsSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { precompress } from "./compress.ts"
import { DEFAULT_DIST, WEB_ROOT } from "./paths.ts"

const REPO = resolve(WEB_ROOT, "..")
/** Everything the bundle is made from. */
const SOURCES = ["web/src", "web/index.html", "web/vite.config.ts", "web/build.ts", "web/compress.ts", "src/client", "src/lp", "src/auth/messages.ts", "src/engine/money.ts", "package-lock.json"]
const STAMP = ".build-stamp"

const newestMtime = (path: string): number => {
  if (!existsSync(path)) return 0
  const st = statSync(path)
  if (!st.isDirectory()) return st.mtimeMs
  return readdirSync(path).reduce((m, name) => Math.max(m, newestMtime(join(path, name))), st.mtimeMs)
}

export const isStale = (outDir: string = DEFAULT_DIST): boolean => {
  const stamp = join(outDir, STAMP)
  if (!existsSync(stamp) || !existsSync(join(outDir, "index.html"))) return true
  const built = statSync(stamp).mtimeMs
  return SOURCES.some((s) => newestMtime(join(REPO, s)) > built)
}

/**
 * Builds into a private folder, then swaps it in with renames: two builds at once (a test and a
 * bench, two engineers) never serve or leave a half-written web/dist.
 */
export const buildWeb = async (outDir: string = DEFAULT_DIST): Promise<string> => {
  const { build } = await import("vite")
  const target = resolve(outDir)
  const fresh = `${target}.build-${process.pid}`
  await build({ configFile: join(WEB_ROOT, "vite.config.ts"), build: { outDir: fresh, emptyOutDir: true }, logLevel: "warn" })
  precompress(fresh)
  writeFileSync(join(fresh, STAMP), `${new Date().toISOString()}\n`) // live-only: a build timestamp, never read as data
  const old = `${target}.old-${process.pid}`
  if (existsSync(target)) renameSync(target, old)
  renameSync(fresh, target)
  rmSync(old, { recursive: true, force: true })
  return outDir
}

/** Builds when stale; returns true when it built. */
export const ensureBuilt = async (outDir: string = DEFAULT_DIST): Promise<boolean> => {
  if (!isStale(outDir)) return false
  await buildWeb(outDir)
  return true
}

// `node --import tsx web/build.ts [--if-stale] [--soft]`
if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(WEB_ROOT, "build.ts")) {
  const ifStale = process.argv.includes("--if-stale")
  const soft = process.argv.includes("--soft")
  const run = ifStale ? ensureBuilt() : buildWeb().then(() => true)
  run.then(
    (built) => console.log(built ? `web app built into ${DEFAULT_DIST}` : "web app up to date"),
    (err: unknown) => {
      // postinstall is --soft: a broken build must not break `npm install`; `npm start` retries it and says why.
      console.error(`web app build failed: ${err instanceof Error ? err.message : String(err)}`)
      process.exitCode = soft ? 0 : 1
    }
  )
}
