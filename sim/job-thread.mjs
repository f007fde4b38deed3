// A worker thread's entry: worker threads start without the parent's way of loading TypeScript,
// so this loads the TypeScript thread from its bundle (scripts/ts-bundle.mjs).
import { fileURLToPath } from "node:url"
import { bundled } from "../scripts/ts-bundle.mjs"

await import(await bundled(fileURLToPath(new URL("./job-thread.ts", import.meta.url))))
