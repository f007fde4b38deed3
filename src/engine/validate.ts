// Shape checks shared by the command handlers.

/** User keys, market ids and builder keys: non-empty strings of bounded length. */
export const isValidId = (value: unknown): value is string =>
  typeof value === "string" && value.length > 0 && value.length <= 128
