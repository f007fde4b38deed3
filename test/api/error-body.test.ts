// The error envelope is built in one place (src/domain/errors.ts `errorBody`; issue 35 item 4):
// no HTTP-facing source writes `{ error: … }` by hand. A scan of the folders that answer HTTP, and
// of the rule itself on a generated file; plus the bodies the constructor gives.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import { describe, expect, it } from "vitest"
import { errorBody } from "../../src/domain/errors.ts"
import { sourceFiles } from "../determinism/source-files.ts"

const root = join(import.meta.dirname, "..", "..")
/** Where HTTP answers are made: the API, the deposit service, ops, the cluster's standby and gateway, the web app's server. */
const HTTP_SOURCES = ["src/api", "src/deposit", "src/ops", "src/runtime", "src/cluster", "web/server.ts"]

/**
 * `file:line text` for each object literal that opens with an `error` key given a string or a name
 * (a type annotation such as `{ error: unknown }` is not one), and each envelope written as JSON
 * text inside a string (`"{\"error\":…`, as node-server's upgrade refusal was).
 */
export const handBuiltEnvelopes = (files: ReadonlyArray<string>): string[] =>
  files.flatMap((f) =>
    readFileSync(f, "utf8")
      .split("\n")
      .flatMap((line, i) =>
        /\{\s*error\s*:\s*(["'`]|(?!(?:unknown|string|number|boolean|never|any|Error)\b)[A-Za-z_$][\w$.]*\s*[,}])/.test(line) || /\{\\?"error\\?"\s*:/.test(line) ? [`${relative(root, f)}:${i + 1} ${line.trim()}`] : []
      )
  )

const httpFiles = (): string[] => HTTP_SOURCES.flatMap((p) => (p.endsWith(".ts") ? [join(root, p)] : sourceFiles(join(root, p))))

describe("the error envelope", () => {
  it("is never written by hand where HTTP answers are made", () => {
    expect(httpFiles().length).toBeGreaterThan(40)
    expect(handBuiltEnvelopes(httpFiles())).toEqual([])
  })

  it("the scan finds a hand-built one (string, variable, template) and passes the constructor", () => {
    const f = join(mkdtempSync(join(tmpdir(), "error-body-")), "x.ts")
    writeFileSync(
      f,
      ['json(500, { error: "internal_error" })', "body = JSON.stringify({ error: code, detail })", "x({ error: `a` })", 'socket.end("HTTP/1.1 404 Not Found\\r\\n\\r\\n{\\"error\\":\\"not_found\\"}")', 'json(500, errorBody("internal_error"))', "let failure: { error: unknown } | null = null"].join("\n")
    )
    expect(handBuiltEnvelopes([f]).map((l) => l.replace(/^.*:(\d+) .*$/, "$1"))).toEqual(["1", "2", "3", "4"])
  })

  it("is { error, detail?, …extensions } in that order, detail left out when absent", () => {
    expect(JSON.stringify(errorBody("forbidden_origin"))).toBe('{"error":"forbidden_origin"}')
    expect(JSON.stringify(errorBody("rate_limited", "slow down", { retry_after: 3 }))).toBe('{"error":"rate_limited","detail":"slow down","retry_after":3}')
    expect(errorBody("not_ready", "journal: not writable", { status: "not_ready" })).toEqual({ error: "not_ready", detail: "journal: not writable", status: "not_ready" })
  })
})
