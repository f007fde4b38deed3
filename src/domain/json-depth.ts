// Bounded JSON: the nesting depth of a body or frame is judged before anything decodes it.

/**
 * Deepest nesting of arrays and objects a JSON body or WebSocket frame may have (an
 * extension; docs/api.md "Limits"). No request of SPEC needs more than a handful of
 * levels, and a body thousands deep overflows the stack of whatever formats it later.
 */
export const MAX_JSON_DEPTH = 20

/**
 * True when `text` nests arrays/objects deeper than `maxDepth`: one pass, brackets inside strings
 * ignored. A string is skipped with `indexOf` to its closing quote (a quote after an odd run of
 * backslashes is escaped), so a long string costs a native search, not a step per character.
 */
export const jsonTooDeep = (text: string, maxDepth: number = MAX_JSON_DEPTH): boolean => {
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 34 /* " */) {
      const close = closingQuote(text, i)
      if (close < 0) return false // unterminated: the rest is inside the string
      i = close
    } else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (++depth > maxDepth) return true
    } else if (c === 93 /* ] */ || c === 125 /* } */) depth--
  }
  return false
}

/** The index of the quote closing the string opened at `open`, or -1. */
const closingQuote = (text: string, open: number): number => {
  let q = open
  for (;;) {
    q = text.indexOf('"', q + 1)
    if (q < 0) return -1
    let backslashes = 0
    for (let k = q - 1; k > open && text.charCodeAt(k) === 92 /* \\ */; k--) backslashes++
    if (backslashes % 2 === 0) return q
  }
}
