// Where the web app lives and builds to (Node only).
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

export const WEB_ROOT = dirname(fileURLToPath(import.meta.url))
export const DEFAULT_DIST = join(WEB_ROOT, "dist")
