// The depth guard in front of every body and WebSocket frame (src/domain/json-depth.ts) skips a
// string with a native search for its closing quote. It must judge exactly as a scan of every
// character does (the reference below), on JSON-like text full of quotes, backslashes and
// brackets, and a long string must cost it a search, not a step per character.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { jsonTooDeep } from "../../src/domain/json-depth.ts"

/** One step per character: `\` skips the next one inside a string, `"` opens and closes it. */
const referenceTooDeep = (text: string, maxDepth: number): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (inString) {
      if (c === "\\") i++
      else if (c === '"') inString = false
    } else if (c === '"') inString = true
    else if (c === "[" || c === "{") {
      if (++depth > maxDepth) return true
    } else if (c === "]" || c === "}") depth--
  }
  return false
}

const jsonish = fc.array(fc.constantFrom("[", "]", "{", "}", '"', "\\", "\\\\", '\\"', "a", ",", ":", "1", " ", "é"), { maxLength: 200 }).map((parts) => parts.join(""))

describe("jsonTooDeep", () => {
  it("agrees with a scan of every character on 20,000 JSON-like texts, at several limits", () => {
    fc.assert(
      fc.property(jsonish, fc.integer({ min: 0, max: 6 }), (text, maxDepth) => {
        expect(jsonTooDeep(text, maxDepth)).toBe(referenceTooDeep(text, maxDepth))
      }),
      { numRuns: 20_000, seed: 31 }
    )
  })

  it("ignores brackets inside strings, escaped quotes included, and counts those outside", () => {
    expect(jsonTooDeep(`{"a":"${"[".repeat(100)}"}`, 2)).toBe(false)
    expect(jsonTooDeep(`{"a":"\\"${"[".repeat(100)}"}`, 2)).toBe(false)
    expect(jsonTooDeep(`{"a":"\\\\"${"[".repeat(3)}`, 2)).toBe(true) // \\\\ is one backslash: the quote closes
    expect(jsonTooDeep("[".repeat(21))).toBe(true)
    expect(jsonTooDeep("[".repeat(20))).toBe(false)
  })

  it("reads a 64 KiB string's characters with a native search, not one by one", () => {
    const frame = JSON.stringify({ type: "subscribe", channel: "x".repeat(64 * 1024 - 40) })
    // A structural count, not a timer: the characters the checker reads one at a time.
    let reads = 0
    const charCodeAt = String.prototype.charCodeAt
    String.prototype.charCodeAt = function (this: string, i: number): number {
      reads++
      return charCodeAt.call(this, i)
    }
    try {
      expect(jsonTooDeep(frame)).toBe(false)
    } finally {
      String.prototype.charCodeAt = charCodeAt
    }
    expect(reads).toBeLessThan(100)
  })
})
