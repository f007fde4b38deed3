// A checker for the Prometheus text exposition format (0.0.4) that mirrors `promtool check
// metrics`: the format's own rules (what promtool's parser refuses) and the naming lints of
// client_golang's promlint (what promtool reports after parsing). Written here so the test runs on
// a clean machine without promtool (CI has no root to install it); docs/metrics.md lists the rules.
// Each problem reads like promtool's: `<family> <what is wrong>`.
import { spawnSync } from "node:child_process"

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"])
/** promlint's type-in-name rule looks for these (every type but untyped). */
const TYPE_WORDS = ["counter", "gauge", "histogram", "summary", "gauge_histogram"]
/** promlint's discouraged unit abbreviations, as whole `_`-separated words. */
const ABBREVIATIONS = ["s", "ms", "us", "ns", "sec", "b", "kb", "mb", "gb", "tb", "pb", "m", "h", "d"]
/** promlint's known units and their base unit. */
const UNITS: Readonly<Record<string, string>> = {
  amperes: "amperes", bytes: "bytes", celsius: "celsius", grams: "grams", joules: "joules", kelvin: "kelvin",
  meters: "meters", metres: "metres", seconds: "seconds", volts: "volts",
  minutes: "seconds", hours: "seconds", days: "seconds", weeks: "seconds", kelvins: "kelvin", fahrenheit: "celsius",
  rankine: "celsius", inches: "meters", yards: "meters", miles: "meters", bits: "bytes", calories: "joules",
  pounds: "grams", ounces: "grams"
}
const UNIT_PREFIXES = ["pico", "nano", "micro", "milli", "centi", "deci", "deca", "hecto", "kilo", "kibi", "mega", "mibi", "giga", "gibi", "tera", "tebi", "peta", "pebi"]

export interface Sample {
  readonly name: string
  readonly labels: ReadonlyMap<string, string>
  readonly value: number
}

export interface Family {
  readonly name: string
  type: string | null
  help: string | null
  readonly samples: Sample[]
}

/** One label set `{a="x",b="y"}` starting at text[0] === "{"; returns the labels and the rest of the line. */
const parseLabels = (text: string, problem: (p: string) => void): { labels: Map<string, string>; rest: string } | null => {
  const labels = new Map<string, string>()
  let i = 1
  for (;;) {
    while (text[i] === " ") i++
    if (text[i] === "}") return { labels, rest: text.slice(i + 1) }
    const eq = text.indexOf("=", i)
    if (eq < 0) return null
    const name = text.slice(i, eq).trim()
    if (!LABEL_NAME.test(name) || name.startsWith("__")) problem(`invalid label name "${name}"`)
    if (labels.has(name)) problem(`duplicate label "${name}" in one sample`)
    i = eq + 1
    if (text[i] !== '"') return null
    let value = ""
    for (i++; i < text.length && text[i] !== '"'; i++) {
      if (text[i] !== "\\") {
        value += text[i]
        continue
      }
      const next = text[++i]
      if (next === "\\" || next === '"') value += next
      else if (next === "n") value += "\n"
      else problem(`invalid escape "\\${next ?? ""}" in the value of label "${name}"`)
    }
    if (text[i] !== '"') return null
    labels.set(name, value)
    i++
    while (text[i] === " ") i++
    if (text[i] === ",") i++
    else if (text[i] !== "}") return null
  }
}

/** A sample value as Prometheus's parser reads it (Go's ParseFloat: `NaN`, `Inf` in any case; prom-client writes `Nan`). */
const parseValue = (raw: string): number | null => {
  const word = raw.toLowerCase()
  if (word === "+inf" || word === "inf" || word === "+infinity" || word === "infinity") return Infinity
  if (word === "-inf" || word === "-infinity") return -Infinity
  if (word === "nan") return NaN
  return /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(raw) ? Number(raw) : null
}

/** The family a sample name belongs to under `type` (histogram and summary samples carry suffixes). */
const belongsTo = (family: Family, sample: string): boolean => {
  if (sample === family.name) return family.type !== "histogram"
  const suffix = sample.slice(family.name.length)
  if (!sample.startsWith(family.name)) return false
  if (family.type === "histogram") return ["_bucket", "_sum", "_count"].includes(suffix)
  if (family.type === "summary") return ["_sum", "_count"].includes(suffix)
  return false
}

/** Parses the text into families, reporting every format error (promtool's parser refuses these). */
export const parseExposition = (text: string): { families: Family[]; problems: string[] } => {
  const families: Family[] = []
  const problems: string[] = []
  const closed = new Set<string>()
  let current: Family | null = null
  const open = (name: string): Family => {
    if (current?.name === name) return current
    if (current !== null) closed.add(current.name)
    if (closed.has(name)) problems.push(`${name} family appears twice (its lines are not together)`)
    current = { name, type: null, help: null, samples: [] }
    families.push(current)
    return current
  }
  text.split("\n").forEach((line, n) => {
    const at = `line ${n + 1}`
    if (line.trim() === "") return
    const meta = /^#\s+(HELP|TYPE)\s+(\S+)(?:\s(.*))?$/.exec(line)
    if (meta !== null) {
      const [, kind, name, rest = ""] = meta as unknown as [string, "HELP" | "TYPE", string, string | undefined]
      if (!METRIC_NAME.test(name)) problems.push(`${at}: invalid metric name "${name}"`)
      const f = open(name)
      if (f.samples.length > 0) problems.push(`${name} ${kind} line after its samples`)
      if (kind === "HELP") {
        if (f.help !== null) problems.push(`${name} second HELP line`)
        f.help = rest
      } else {
        if (f.type !== null) problems.push(`${name} second TYPE line`)
        if (!TYPES.has(rest.trim())) problems.push(`${name} unknown type "${rest}"`)
        f.type = rest.trim()
      }
      return
    }
    if (line.startsWith("#")) return // a comment
    const nameEnd = line.search(/[{ ]/)
    const name = nameEnd < 0 ? line : line.slice(0, nameEnd)
    if (!METRIC_NAME.test(name)) return void problems.push(`${at}: invalid metric name "${name}"`)
    const problem = (p: string) => problems.push(`${at}: ${name} ${p}`)
    let labels = new Map<string, string>()
    let rest = line.slice(name.length)
    if (rest.startsWith("{")) {
      const parsed = parseLabels(rest, problem)
      if (parsed === null) return void problem("unterminated or malformed label set")
      ;({ labels, rest } = parsed)
    }
    const fields = rest.trim().split(/\s+/)
    const value = parseValue(fields[0] ?? "")
    if (value === null || fields.length > 2 || (fields[1] !== undefined && !/^-?\d+$/.test(fields[1]))) return void problem(`malformed value or timestamp "${rest.trim()}"`)
    const f: Family = current !== null && belongsTo(current, name) ? current : open(name)
    if (f.type === null && f.name === name) f.type = "untyped"
    f.samples.push({ name, labels, value })
  })
  return { families, problems }
}

const seriesKey = (s: Sample, without?: string): string =>
  `${s.name}{${[...s.labels].filter(([k]) => k !== without).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(",")}}`

/** No two samples of one series; a histogram's buckets ascend to le="+Inf", cumulative, with _count equal to it and a _sum. */
const checkSeries = (f: Family, problems: string[]): void => {
  const seen = new Set<string>()
  for (const s of f.samples) {
    const key = seriesKey(s)
    if (seen.has(key)) problems.push(`${f.name} duplicate series ${key}`)
    seen.add(key)
  }
  if (f.type !== "histogram") return
  const groups = new Map<string, { buckets: Array<[number, number]>; count?: number; sum?: number }>()
  for (const s of f.samples) {
    const base = seriesKey({ ...s, name: f.name }, "le")
    const g = groups.get(base) ?? { buckets: [] }
    groups.set(base, g)
    if (s.name.endsWith("_bucket")) {
      const le = s.labels.get("le")
      const bound = le === undefined ? null : parseValue(le)
      if (bound === null) problems.push(`${f.name} bucket without a valid "le" label`)
      else g.buckets.push([bound, s.value])
    } else if (s.name.endsWith("_count")) g.count = s.value
    else g.sum = s.value
  }
  for (const [base, g] of groups) {
    const last = g.buckets.at(-1)
    if (last === undefined || last[0] !== Infinity) problems.push(`${f.name} ${base}: buckets do not end with le="+Inf"`)
    for (let i = 1; i < g.buckets.length; i++) {
      if (g.buckets[i]![0] <= g.buckets[i - 1]![0]) problems.push(`${f.name} ${base}: "le" bounds not ascending`)
      if (g.buckets[i]![1] < g.buckets[i - 1]![1]) problems.push(`${f.name} ${base}: bucket counts not cumulative`)
    }
    if (g.count === undefined || g.sum === undefined) problems.push(`${f.name} ${base}: missing _count or _sum`)
    else if (last !== undefined && g.count !== last[1]) problems.push(`${f.name} ${base}: _count ${g.count} differs from the +Inf bucket ${last[1]}`)
  }
}

/** client_golang's promlint rules, by family (what `promtool check metrics` prints after parsing). */
const lintNames = (f: Family): string[] => {
  const out: string[] = []
  const n = f.name
  const lower = n.toLowerCase()
  const say = (p: string) => out.push(`${n} ${p}`)
  const words = lower.split("_")
  if (f.help === null) say("no help text")
  if (f.type === "counter" && !n.endsWith("_total")) say(`counter metrics should have "_total" suffix`)
  if (f.type !== "counter" && f.type !== "untyped" && n.endsWith("_total")) say(`non-counter metrics should not have "_total" suffix`)
  if (f.type !== "untyped") {
    if (f.type !== "histogram" && n.endsWith("_bucket")) say(`non-histogram metrics should not have "_bucket" suffix`)
    for (const suffix of ["_count", "_sum"]) if (f.type !== "histogram" && f.type !== "summary" && n.endsWith(suffix)) say(`non-histogram and non-summary metrics should not have "${suffix}" suffix`)
    const labelNames = new Set(f.samples.flatMap((s) => [...s.labels.keys()]))
    if (f.type !== "histogram" && labelNames.has("le")) say(`non-histogram metrics should not have "le" label`)
    if (f.type !== "summary" && labelNames.has("quantile")) say(`non-summary metrics should not have "quantile" label`)
  }
  for (const t of TYPE_WORDS) if (lower.includes(`_${t}_`) || lower.endsWith(`_${t}`)) say(`metric name should not include type '${t}'`)
  if (n.includes(":")) say("metric names should not contain ':'")
  if (/[a-z][A-Z]/.test(n)) say("metric names should be written in 'snake_case' not 'camelCase'")
  for (const label of new Set(f.samples.flatMap((s) => [...s.labels.keys()]))) if (/[a-z][A-Z]/.test(label)) say("label names should be written in 'snake_case' not 'camelCase'")
  if (ABBREVIATIONS.some((a) => words.slice(1).includes(a))) say("metric names should not contain abbreviated units")
  for (const w of words) {
    const prefix = UNIT_PREFIXES.find((p) => w.startsWith(p) && UNITS[w.slice(p.length)] !== undefined)
    const base = UNITS[w] ?? (prefix === undefined ? undefined : UNITS[w.slice(prefix.length)])
    if (base === undefined) continue
    if (base !== w) say(`use base unit "${base}" instead of "${w}"`)
    break // promlint looks at the first unit word only
  }
  return out
}

/** Every problem promtool's `check metrics` would report on `text`, and the format rules above; [] when clean. */
export const lintExposition = (text: string): string[] => {
  const { families, problems } = parseExposition(text)
  for (const f of families) {
    f.type ??= "untyped" // samples without a TYPE line
    checkSeries(f, problems)
    problems.push(...lintNames(f))
  }
  return problems
}

/** `promtool check metrics` on `text`: its exit code and output, or null when promtool is not on PATH. */
export const promtool = (text: string): { code: number; output: string } | null => {
  const r = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" })
  if (r.error !== undefined) return null // ENOENT: not installed
  return { code: r.status ?? -1, output: `${r.stdout}${r.stderr}` }
}
