// The caller's progress on stderr while a sweep runs on the queue: jobs done of total, jobs
// running, workers seen. On a terminal one line redrawn in place; elsewhere (CI logs, pipes) a
// line each time a job finishes or a new worker shows up. stdout is left to the sweep's own output.

export interface QueueState {
  readonly done: number
  readonly total: number
  readonly running: number
  readonly workers: number
}

export interface QueueProgress {
  update(s: QueueState): void
  /** A line of its own (a duplicate dropped, a job redelivered). */
  note(line: string): void
  /** Clears the redrawn line before the caller writes to the terminal. */
  clear(): void
  done(): void
}

const text = (label: string, s: QueueState): string =>
  `${label}: ${s.done}/${s.total} jobs done, ${s.running} running, ${s.workers} worker${s.workers === 1 ? "" : "s"} seen`

export const queueProgress = (label: string, stream: NodeJS.WriteStream = process.stderr): QueueProgress => {
  const tty = stream.isTTY === true
  let last: QueueState | null = null
  let drawn = false
  const draw = (): void => {
    if (last === null) return
    stream.write(`\r\x1b[K${text(label, last)}`)
    drawn = true
  }
  const clear = (): void => {
    if (drawn) stream.write("\r\x1b[K")
    drawn = false
  }
  return {
    update(s) {
      const changed = last === null || s.done !== last.done || s.workers !== last.workers
      last = s
      if (tty) draw()
      else if (changed) stream.write(`${text(label, s)}\n`)
    },
    note(line) {
      clear()
      stream.write(`${line}\n`)
      if (tty) draw()
    },
    clear,
    done() {
      if (tty && drawn) stream.write("\n")
      drawn = false
    }
  }
}
