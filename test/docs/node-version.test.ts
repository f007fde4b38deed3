// The Node.js version the project asks for is the one it can honour (README "Set-up",
// docs/decisions.md § Node 20): package.json `engines` admits the Node running this suite, the
// lowest Node of each of its ranges satisfies every installed dependency's own `engines`
// (one named exception, @sparticuz/chromium, whose warning the README explains), and the README
// states the same range.
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

const root = join(import.meta.dirname, "..", "..")
const readJson = (path: string): any => JSON.parse(readFileSync(join(root, path), "utf8"))
const pkg = readJson("package.json")
const RANGE: string = pkg.engines.node

type Version = readonly [number, number, number]
const parse = (v: string): Version => {
  const m = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(v.trim())
  if (m === null) throw new Error(`not a version: "${v}"`)
  return [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)]
}
const cmp = (a: Version, b: Version): number => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]

/** The comparators npm ranges use in `engines` here: `>=x`, `>x`, `<x`, `<=x`, `^x`, an exact `x`; ` ` is and, `||` is or. */
const satisfies = (version: string, range: string): boolean => {
  const v = parse(version)
  return range.split("||").some((branch) => {
    const parts = branch.trim().replace(/(>=|<=|>|<|\^)\s+/g, "$1").split(/\s+/)
    return parts.every((part) => {
      const m = /^(>=|<=|>|<|\^)?(.+)$/.exec(part)!
      const bound = parse(m[2]!)
      switch (m[1]) {
        case ">=": return cmp(v, bound) >= 0
        case ">": return cmp(v, bound) > 0
        case "<": return cmp(v, bound) < 0
        case "<=": return cmp(v, bound) <= 0
        case "^": return cmp(v, bound) >= 0 && (bound[0] > 0 ? v[0] === bound[0] : v[1] === bound[1])
        default: return cmp(v, bound) === 0
      }
    })
  })
}

/** The lowest version of each `||` branch of a range (the floors a user may run). */
const floors = (range: string): string[] =>
  range.split("||").map((b) => {
    const m = /(?:>=|\^)\s*(\d+(?:\.\d+){0,2})/.exec(b)
    if (m === null) throw new Error(`no lower bound in "${b.trim()}"`)
    return m[1]!
  })

/** Packages whose `engines` ask for more than our floors, each with the reason README gives. */
const EXCEPTIONS = new Set(["@sparticuz/chromium"])

describe("the Node.js version (package.json engines, README)", () => {
  it("admits the Node running this suite", () => {
    expect(satisfies(process.version, RANGE), `${process.version} against ${RANGE}`).toBe(true)
  })

  it("asks for no Node older than a dependency needs: every floor satisfies every dependency's engines but the named exception", () => {
    const deps = [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.devDependencies ?? {})]
    const refused: string[] = []
    let checked = 0
    for (const name of deps) {
      const wants: string | undefined = readJson(join("node_modules", name, "package.json")).engines?.node
      if (wants === undefined) continue
      checked++
      for (const floor of floors(RANGE)) if (!satisfies(floor, wants)) refused.push(`${name} (${wants}) refuses Node ${floor}`)
    }
    expect(checked).toBeGreaterThan(5)
    // The exception is still one (README explains its warning); drop it from EXCEPTIONS once it is not.
    expect(refused.filter((r) => !EXCEPTIONS.has(r.split(" ")[0]!))).toEqual([])
    expect(new Set(refused.map((r) => r.split(" ")[0]))).toEqual(EXCEPTIONS)
    expect(devOnly("@sparticuz/chromium")).toBe(true)
  })

  it("is the range README states", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8")
    expect(readme).toContain(`Node.js \`${RANGE}\``)
    expect(readme).not.toMatch(/\(Node 20\)/) // the old, looser wording
  })
})

const devOnly = (name: string): boolean => name in (pkg.devDependencies ?? {}) && !(name in (pkg.dependencies ?? {}))
