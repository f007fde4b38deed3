// A progress bar on stderr, only when stderr is a terminal (pipes and CI logs stay clean).
// Wall-clock reads here only throttle redraws and estimate the time left; no result depends on them.

export interface Progress {
  update(done: number, total: number): void
  done(): void
}

const NONE: Progress = { update: () => undefined, done: () => undefined }

export const progressBar = (label: string, stream: NodeJS.WriteStream = process.stderr): Progress => {
  if (stream.isTTY !== true) return NONE
  const started = performance.now() // live-only: progress bar ETA
  let lastDraw = 0
  let drawn = false
  return {
    update(done, total) {
      const now = performance.now() // live-only: progress bar redraw throttle
      if (now - lastDraw < 100 && done < total) return
      lastDraw = now
      const width = 30
      const frac = total === 0 ? 1 : Math.min(1, done / total)
      const full = Math.round(frac * width)
      const elapsed = (now - started) / 1000
      const eta = frac > 0 ? (elapsed / frac - elapsed).toFixed(0) : "?"
      stream.write(`\r${label} [${"#".repeat(full)}${"-".repeat(width - full)}] ${(frac * 100).toFixed(0).padStart(3)}% ${done.toLocaleString("en-US")}/${total.toLocaleString("en-US")} eta ${eta}s `)
      drawn = true
    },
    done() {
      if (drawn) stream.write("\n")
    }
  }
}
