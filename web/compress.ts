// Precompression of the built app: each text file of web/dist gets a brotli (.br) and a gzip
// (.gz) sibling at build time, so the server sends the smallest encoding the browser accepts
// without compressing per request (web/server.ts). A sibling is kept only when it is smaller.
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { extname, join } from "node:path"
import { brotliCompressSync, constants, gzipSync } from "node:zlib"

/** The types worth compressing (images here are already compressed formats or tiny). */
export const COMPRESSIBLE = new Set([".html", ".js", ".css", ".json", ".svg", ".map", ".txt"])
/** Below this a compressed body saves less than its headers cost. */
export const MIN_BYTES = 1024

export interface Encoded {
  readonly path: string
  readonly bytes: number
  readonly brBytes: number | null
  readonly gzBytes: number | null
}

const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const p = join(dir, name)
    return statSync(p).isDirectory() ? files(p) : [p]
  })

/** Writes `<file>.br` and `<file>.gz` beside each compressible file of `dir`; returns what it did. */
export const precompress = (dir: string): Encoded[] =>
  files(dir)
    .filter((p) => COMPRESSIBLE.has(extname(p)))
    .map((path) => {
      const body = readFileSync(path)
      if (body.length < MIN_BYTES) return { path, bytes: body.length, brBytes: null, gzBytes: null }
      const br = brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } })
      const gz = gzipSync(body, { level: 9 })
      if (br.length < body.length) writeFileSync(`${path}.br`, br)
      if (gz.length < body.length) writeFileSync(`${path}.gz`, gz)
      return { path, bytes: body.length, brBytes: br.length < body.length ? br.length : null, gzBytes: gz.length < body.length ? gz.length : null }
    })

/**
 * The encodings an Accept-Encoding header allows, among br and gzip, best first: a coding
 * with q=0 is refused, `*` stands for any not named.
 */
export const acceptedEncodings = (header: string | undefined): Array<"br" | "gzip"> => {
  if (header === undefined) return []
  const q = new Map<string, number>()
  for (const part of header.split(",")) {
    const [name, ...params] = part.trim().toLowerCase().split(";")
    if (name === undefined || name === "") continue
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith("q="))
    const value = qParam === undefined ? 1 : Number(qParam.slice(2))
    q.set(name, Number.isFinite(value) ? value : 0)
  }
  const allowed = (coding: string): boolean => (q.get(coding) ?? q.get("*") ?? 0) > 0
  return (["br", "gzip"] as const).filter(allowed)
}
