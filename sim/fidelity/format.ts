// The fidelity tables' number formats, shared by the CLI's table, the noise floor's and the bias lines.

/** A difference with its sign (+1.50, -2.00, 0.00), "-" for none. */
export const signed = (x: number | null): string => (x === null ? "-" : `${x > 0 ? "+" : ""}${x.toFixed(2)}`)

/** A ratio to two places, "inf" for x/0, "-" for none. */
export const ratioText = (x: number | null): string => (x === null ? "-" : Number.isFinite(x) ? x.toFixed(2) : "inf")
