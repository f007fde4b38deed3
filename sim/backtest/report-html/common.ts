// What the report page and the sweep index share: escaping, USDC formatting, tables, the
// style sheet, and embedding JSON and scripts inline (the pages are single files).
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { pathToFileURL } from "node:url"

export const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

export const usdc = (micro: number): string => (micro / 1e6).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })

export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>, cls = ""): string =>
  `<table${cls === "" ? "" : ` class="${cls}"`}><tr>${header.map((h) => `<th>${esc(h)}</th>`).join("")}</tr>${rows.map((r) => `<tr>${r.map((c) => `<td>${esc(c)}</td>`).join("")}</tr>`).join("")}</table>`

export const STYLE = `body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}
table{border-collapse:collapse;margin:8px 0 18px}td,th{border-bottom:1px solid #ddd;padding:3px 10px;text-align:right}
td:first-child,th:first-child{text-align:left}th{background:#f4f4f4}
.muted{color:#888}.kv td{text-align:left;overflow-wrap:anywhere}pre{background:#f4f4f4;padding:8px;white-space:pre-wrap;overflow-wrap:anywhere}.note{background:#fff4d6;border-left:4px solid #e0a800;padding:6px 10px;margin:6px 0}`

/**
 * JSON inside a <script type="application/json">: `<` is escaped so no string in the data
 * (a market id, a file path) can close the element; JSON.parse reads \u003c back as `<`.
 */
export const jsonScript = (id: string, value: unknown): string =>
  `<script type="application/json" id="${id}">${JSON.stringify(value).replace(/</g, "\\u003c")}</script>`

/** A script file shipped next to this module (or a package's), read once and inlined. */
const cache = new Map<string, string>()
export const inlineScript = (url: URL): string => {
  const key = url.href
  let text = cache.get(key)
  if (text === undefined) {
    text = readFileSync(url, "utf8")
    if (/<\/script/i.test(text)) throw new Error(`${url.pathname} contains "</script" and cannot be inlined`)
    cache.set(key, text)
  }
  return `<script>${text}</script>`
}

/** TradingView Lightweight Charts 5.2.1 (Apache-2.0), the standalone build: defines window.LightweightCharts. */
export const CHART_LIBRARY = pathToFileURL(
  join(dirname(createRequire(import.meta.url).resolve("lightweight-charts/package.json")), "dist", "lightweight-charts.standalone.production.js")
)
