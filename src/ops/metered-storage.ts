// The journal's disk with two measurements added: records per write (the group-commit batch)
// and the fdatasync's latency, on the monotonic clock. It wraps the Storage port, so the
// journal's code is unchanged and the simulator (which passes its own disk) measures nothing.
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
      writev: (buffers) => {
        observe.batch(buffers.length)
        return file.writev(buffers)
      },
      datasync: async () => {
        const t0 = monoMs()
        await file.datasync()
        observe.fsyncSeconds((monoMs() - t0) / 1000)
      }
    }
  }
})
