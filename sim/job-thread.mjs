// Worker threads do not inherit the parent's tsx loader: register it, then load the TypeScript thread.
import { register } from "tsx/esm/api"

register()
await import("./job-thread.ts")
