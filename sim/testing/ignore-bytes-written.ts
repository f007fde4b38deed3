// A deliberately broken disk layer for testing the auditor: every write reports the
// whole batch written whatever the disk took (the bug of issue 18, where the journal
// ignored `bytesWritten` from writev). Short writes and a filling disk then leave
// acknowledged records torn on disk; the auditor must catch it after a recovery.
import type { Storage } from "../../src/store/storage.ts"

export const ignoreBytesWritten = (storage: Storage): Storage => ({
  ...storage,
  openAppend: async (path) => {
    const file = await storage.openAppend(path)
    return {
      ...file,
      writev: async (buffers) => {
        await file.writev(buffers)
        return buffers.reduce((n, b) => n + b.length, 0)
      }
    }
  }
})

/** Planted bugs the CLI can switch on by name, to reproduce a failing test run. */
export const STORAGE_PLANTS: Record<string, (storage: Storage) => Storage> = { "ignore-bytes-written": ignoreBytesWritten }
