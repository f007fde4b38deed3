// A one-line progress bar on stderr (terminals only; redrawn at most 10 times a second).
// It draws at once (0%), then shows the time left, estimated from the wall time so far.
// Wall-clock reads here only throttle redraws and estimate the ETA; no result depends on them.

/** "42s", "3m05s", "1h02m": the time left, or "?" before any progress. */
export const formatEta = (sec: number): string => {
  if (!Number.isFinite(sec) || sec < 0) return "?"
  const s = Math.round(sec)
  if (s < 60) return `${s}s`
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`
}

export const progressBar = (label: string) => {
  const started = Date.now() // live-only: ETA from wall time, never affects the run
  let last = -1
  const draw = (fraction: number, note: string, now: number): void => {
    const width = 30
    const f = Math.max(0, Math.min(1, fraction))
    const filled = Math.round(f * width)
    const eta = f > 0 ? formatEta(((now - started) / 1000) * (1 / f - 1)) : "?"
    process.stderr.write(`\r${label} [${"#".repeat(filled)}${".".repeat(width - filled)}] ${Math.floor(f * 100)}% ${note} eta ${eta}   `)
  }
  draw(0, "starting", started)
  return {
    update(fraction: number, note: string): void {
      const now = Date.now() // live-only: redraw throttling by wall time, never affects the run
      if (now - last < 100 && fraction < 1) return
      last = now
      draw(fraction, note, now)
    },
    done(): void {
      process.stderr.write("\n")
    }
  }
}
