// Bounded JSON: the nesting depth of a body or frame is judged before anything decodes it.

/**
 * Deepest nesting of arrays and objects a JSON body or WebSocket frame may have (an
 * extension; docs/api.md "Limits"). No request of SPEC needs more than a handful of
 * levels, and a body thousands deep overflows the stack of whatever formats it later.
 */
export const MAX_JSON_DEPTH = 20

/** True when `text` nests arrays/objects deeper than `maxDepth`: one pass, brackets inside strings ignored. */
export const jsonTooDeep = (text: string, maxDepth: number = MAX_JSON_DEPTH): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92 /* \\ */) i++
      else if (c === 34 /* " */) inString = false
    } else if (c === 34) inString = true
    else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (++depth > maxDepth) return true
    } else if (c === 93 /* ] */ || c === 125 /* } */) depth--
  }
  return false
}
