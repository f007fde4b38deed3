// The service's one logger (docs/metrics.md "Logs"): one line per request and per notable
// event, JSON (`LOG_FORMAT=json`) or one readable line (`pretty`), filtered by `LOG_LEVEL`.
// Time comes from the clock it is handed; lines go to a sink (stderr live, an array in tests).
// Secrets never reach a line: fields whose name says secret are replaced, and an error is
// logged as its name, message and code (its stack only at debug).

export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const
export type LogLevel = (typeof LOG_LEVELS)[number]
export type LogFormat = "json" | "pretty"
export type LogFields = Readonly<Record<string, unknown>>

export interface Logger {
  readonly level: LogLevel
  /** Whether a line at `level` would be written (skip building costly fields when not). */
  enabled(level: LogLevel): boolean
  debug(msg: string, fields?: LogFields): void
  info(msg: string, fields?: LogFields): void
  warn(msg: string, fields?: LogFields): void
  error(msg: string, fields?: LogFields): void
  /** Lines dropped because the sink could not write them (read by /metrics). */
  droppedLines(): number
}

const RANK: Readonly<Record<LogLevel, number>> = { debug: 0, info: 1, warn: 2, error: 3 }

/** Field names that may carry a secret: such a value is never written unless it is a flag or a count. */
const SECRET_FIELD = /cookie|authorization|token|secret|password|private|signature|api_?key|mnemonic/i

export const REDACTED = "[redacted]"

/** An error as log fields: code, name and message; the stack only when `withStack`. */
export const errorFields = (err: unknown, withStack: boolean): Record<string, unknown> => {
  if (!(err instanceof Error)) return { error_message: String(err) }
  const code = (err as { code?: unknown }).code
  return {
    error_name: err.name,
    error_message: err.message,
    ...(typeof code === "string" ? { error_code: code } : {}),
    ...(withStack && err.stack !== undefined ? { stack: err.stack } : {})
  }
}

const clean = (fields: LogFields, withStack: boolean): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const k in fields) {
    const v = fields[k]
    if (v === undefined) continue
    if (SECRET_FIELD.test(k) && typeof v !== "boolean" && typeof v !== "number") out[k] = REDACTED
    else if (v instanceof Error) Object.assign(out, errorFields(v, withStack))
    else out[k] = v
  }
  return out
}

const isoOf = (ms: number): string => new Date(ms).toISOString() // live-only: formats the time it is given; reads no clock

const prettyValue = (v: unknown): string => (typeof v === "string" ? (/\s/.test(v) ? JSON.stringify(v) : v) : JSON.stringify(v))

export interface LoggerOptions {
  readonly level?: LogLevel
  readonly format?: LogFormat
  /** The wall clock (a line's `ts`). */
  readonly nowMs: () => number
  /** Receives each finished line, without its newline. */
  readonly write: (line: string) => void
  /** Lines the sink could not write (LineSink.droppedLines); 0 when absent. */
  readonly droppedLines?: () => number
}

export const makeLogger = (o: LoggerOptions): Logger => {
  const level = o.level ?? "info"
  const min = RANK[level]
  const format = o.format ?? "json"
  const debug = min === 0
  const emit = (lvl: LogLevel, msg: string, fields: LogFields | undefined): void => {
    if (RANK[lvl] < min) return
    const ts = isoOf(o.nowMs()) // live-only: a log line's own wall time
    const rest = fields === undefined ? {} : clean(fields, debug)
    if (format === "json") return o.write(JSON.stringify({ ts, level: lvl, msg, ...rest }))
    const { stack, ...shown } = rest
    let line = `${ts} ${lvl.toUpperCase().padEnd(5)} ${msg}`
    for (const k in shown) line += ` ${k}=${prettyValue(shown[k])}`
    o.write(typeof stack === "string" ? `${line}\n${stack}` : line)
  }
  return {
    level,
    enabled: (lvl) => RANK[lvl] >= min,
    debug: (msg, f) => emit("debug", msg, f),
    info: (msg, f) => emit("info", msg, f),
    warn: (msg, f) => emit("warn", msg, f),
    error: (msg, f) => emit("error", msg, f),
    droppedLines: o.droppedLines ?? (() => 0)
  }
}

/** Writes nothing (the simulator, bare tests). */
export const silentLogger: Logger = {
  level: "error",
  enabled: () => false,
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  droppedLines: () => 0
}

export const parseLogLevel = (s: string): LogLevel | null => ((LOG_LEVELS as ReadonlyArray<string>).includes(s) ? (s as LogLevel) : null)

export interface LineSink {
  write(line: string): void
  /** Writes what is buffered now (at exit). */
  flush(): void
  /** Lines that could not be written (a full disk, a file-size limit, a closed pipe): dropped, never fatal. */
  droppedLines(): number
}

/**
 * A sink that joins the lines written in one turn of the event loop into one write, so a busy
 * second costs a few writes rather than one per request; `flush` empties it at exit. Logging
 * never takes the service down: a write that throws, or reports an error later through
 * `failed`, drops its lines and counts them (`twinbook_log_lines_dropped_total`).
 */
export const batchedSink = (writeOut: (text: string, failed: (err: unknown) => void) => void): LineSink => {
  let buffered: string[] = []
  let scheduled = false
  let dropped = 0
  const flush = (): void => {
    scheduled = false
    if (buffered.length === 0) return
    const lines = buffered.length
    const text = `${buffered.join("\n")}\n`
    buffered = []
    let counted = false
    const failed = (): void => {
      if (counted) return
      counted = true
      dropped += lines
    }
    try {
      writeOut(text, failed)
    } catch {
      failed()
    }
  }
  return {
    droppedLines: () => dropped,
    write: (line) => {
      buffered.push(line)
      if (buffered.length >= 512) return flush()
      if (!scheduled) {
        scheduled = true
        setImmediate(flush)
      }
    },
    flush
  }
}
