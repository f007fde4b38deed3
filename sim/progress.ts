// A one-line progress bar on stderr (terminals only; redrawn at most 10 times a second).
export const progressBar = (label: string) => {
  let last = -1
  return {
    update(fraction: number, note: string): void {
      const now = Date.now() // live-only: redraw throttling by wall time, never affects the run

      if (now - last < 100 && fraction < 1) return
      last = now
      const width = 30
      const filled = Math.round(Math.max(0, Math.min(1, fraction)) * width)
      process.stderr.write(`\r${label} [${"#".repeat(filled)}${".".repeat(width - filled)}] ${Math.floor(fraction * 100)}% ${note}   `)
    },
    done(): void {
      process.stderr.write("\n")
    }
  }
}
