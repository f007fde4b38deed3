// The nats-server binary twinbook's cluster mode and its tests run (docs/cluster.md "Which NATS").
// Pinned on purpose to Debian trixie's 2.10.27: it has `jetstream { sync_interval: always }`
// (fsync before every acknowledgement; 2.9.10, bookworm's package, refuses the option: "unknown
// field sync_interval"), and it is past 2.10.23, which fixed the crash that lost acknowledged
// writes in 2.10.22 (Jepsen, NATS 2.12.1, December 2025). Found in order: NATS_SERVER (a path),
// a `nats-server` on PATH of at least MIN_VERSION, this project's cache (`.cache/nats-server/`),
// else the Debian package is downloaded from deb.debian.org (the one registry this machine class
// reaches), checked against its pinned SHA-256 and unpacked into the cache with `dpkg-deb -x` —
// no root, nothing installed system-wide. Anywhere without dpkg-deb it fails with one line naming
// the package to install.
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { chmodSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"

export const NATS_VERSION = "2.10.27"
/** The oldest version twinbook accepts from PATH: sync_interval, and the 2.10.23 durability fix. */
export const MIN_VERSION = "2.10.23"
const DEB = {
  url: "http://deb.debian.org/debian/pool/main/n/nats-server/nats-server_2.10.27-1+b2_amd64.deb",
  sha256: "6d913ac987b78734c08537c2adeb1526cf735f216173a9170d94b185fcfe6f8a",
  bytes: 4_502_708
} as const

const root = join(import.meta.dirname, "..")
const cacheDir = join(root, ".cache", "nats-server", NATS_VERSION)
const cachedBinary = join(cacheDir, "nats-server")

/** "nats-server: v2.10.27" → [2, 10, 27]; null when the binary does not answer. */
export const versionOf = (binary: string): [number, number, number] | null => {
  try {
    const out = execFileSync(binary, ["--version"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], timeout: 10_000 })
    const m = /v(\d+)\.(\d+)\.(\d+)/.exec(out)
    return m === null ? null : [Number(m[1]), Number(m[2]), Number(m[3])]
  } catch {
    return null
  }
}

const atLeast = (v: [number, number, number], min: string): boolean => {
  const m = min.split(".").map(Number)
  for (let i = 0; i < 3; i++) if (v[i]! !== m[i]!) return v[i]! > m[i]!
  return true
}

const onPath = (): string | null => {
  for (const dir of (process.env.PATH ?? "").split(":")) {
    const candidate = join(dir, "nats-server")
    if (dir !== "" && existsSync(candidate)) return candidate
  }
  return null
}

const download = async (): Promise<void> => {
  try {
    execFileSync("dpkg-deb", ["--version"], { stdio: "ignore" })
  } catch {
    throw new Error(`nats-server ${MIN_VERSION} or later is needed: install the package nats-server (Debian trixie ${NATS_VERSION}, or from nats.io) or set NATS_SERVER`)
  }
  const res = await fetch(DEB.url)
  if (!res.ok) throw new Error(`nats-server: download of ${DEB.url} failed: HTTP ${res.status}`)
  const bytes = Buffer.from(await res.arrayBuffer())
  const sha = createHash("sha256").update(bytes).digest("hex")
  if (bytes.length !== DEB.bytes || sha !== DEB.sha256) throw new Error(`nats-server: ${DEB.url} is not the pinned package (sha256 ${sha}, ${bytes.length} bytes)`)
  mkdirSync(join(root, ".cache"), { recursive: true })
  // Unpacked beside the cache and renamed into place: a run cut short leaves no half binary.
  const work = mkdtempSync(join(root, ".cache", "nats-server-"))
  try {
    const deb = join(work, "nats-server.deb")
    writeFileSync(deb, bytes)
    execFileSync("dpkg-deb", ["-x", deb, join(work, "x")], { stdio: "ignore" })
    mkdirSync(join(work, "out"))
    renameSync(join(work, "x", "usr", "sbin", "nats-server"), join(work, "out", "nats-server"))
    chmodSync(join(work, "out", "nats-server"), 0o755)
    mkdirSync(join(cacheDir, ".."), { recursive: true })
    try {
      renameSync(join(work, "out"), cacheDir)
    } catch (err) {
      // Another process unpacked it first: theirs is the same file.
      if (!existsSync(cachedBinary)) throw err
    }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

let found: Promise<string> | null = null

/** The path of a nats-server that twinbook accepts, downloading the pinned one when needed. */
export const ensureNatsServer = (): Promise<string> =>
  (found ??= (async () => {
    const explicit = process.env.NATS_SERVER
    if (explicit !== undefined && explicit !== "") {
      const v = versionOf(explicit)
      if (v === null || !atLeast(v, MIN_VERSION)) throw new Error(`NATS_SERVER=${explicit}: not a nats-server ${MIN_VERSION} or later`)
      return explicit
    }
    const path = onPath()
    if (path !== null) {
      const v = versionOf(path)
      if (v !== null && atLeast(v, MIN_VERSION)) return path
    }
    if (versionOf(cachedBinary) === null) await download()
    return cachedBinary
  })())

// `node --import tsx scripts/nats-server.ts`: prints the binary's path (fetching it when needed).
if (import.meta.url === `file://${process.argv[1]}`) {
  ensureNatsServer().then(
    (p) => console.log(p),
    (err: unknown) => {
      console.error(err instanceof Error ? err.message : String(err))
      process.exit(1)
    }
  )
}
