// DuckDB's bindings, loaded at first use rather than at import: loading them was ~0.1 s of CPU
// at every process start (issue 35 item 6), and most processes (the simulator, cluster roles,
// a CLI's --help) never open a database. Only type imports of "@duckdb/node-api" elsewhere.
import type * as DuckDB from "@duckdb/node-api"
import { createRequire } from "node:module"

const requireHere = createRequire(import.meta.url)
let loaded: typeof DuckDB | undefined

export const duckdb = (): typeof DuckDB => (loaded ??= requireHere("@duckdb/node-api") as typeof DuckDB)
