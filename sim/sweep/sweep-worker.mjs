// Worker threads do not inherit the parent's tsx loader: register it, then load the TypeScript worker.
import { register } from "tsx/esm/api"

register()
await import("./sweep-worker.ts")
