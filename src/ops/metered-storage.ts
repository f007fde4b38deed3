// The journal's disk with two measurements added: records per write (the group-commit batch)
// and the latency of making it durable, on the monotonic clock: the write itself on an O_DSYNC
// file (the live disk), else the fdatasync. It wraps the Storage port, so the journal's code is
// unchanged and the simulator (which passes its own disk) measures nothing.
import type { AppendFile, Storage } from "../store/storage.ts"

export interface JournalObserver {
  /** One write of `records` frames (a short write's continuation counts as another). */
  batch(records: number): void
  fsyncSeconds(seconds: number): void
}

export const meteredStorage = (inner: Storage, monoMs: () => number, observe: JournalObserver): Storage => ({
  ...inner,
  openAppend: async (path) => {
    const file: AppendFile = await inner.openAppend(path)
    return {
      ...file,
      writev: async (buffers) => {
        observe.batch(buffers.length)
        if (!file.writesAreDurable) return file.writev(buffers)
        const t0 = monoMs()
        const written = await file.writev(buffers)
        observe.fsyncSeconds((monoMs() - t0) / 1000)
        return written
      },
      datasync: async () => {
        const t0 = monoMs()
        await file.datasync()
        observe.fsyncSeconds((monoMs() - t0) / 1000)
      }
    }
  }
})
