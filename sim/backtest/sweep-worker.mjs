// Worker entry for sweeps. On Node 20 a worker's `execArgv: ["--import", "tsx"]` does not
// reach the worker's own entry module, so the TypeScript loader is registered here first.
import { register } from "tsx/esm/api"

register()
await import("./sweep-worker.ts")
