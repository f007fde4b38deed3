// The scenario file's field reference, generated from the schema itself (sim/scenario/scenario.ts), so the
// docs cannot drift from what the validator accepts: every block, every agent kind's and fault
// kind's own fields, each with its type, range and default, and what it means where the schema
// says (its `doc` annotation). docs/simulation.md carries the output between two markers;
// scripts/scenario-reference.ts writes it and test/sim/scenario-reference.test.ts fails when it differs.
import { Option, SchemaAST as AST } from "effect"
import { DocId, Scenario, TypeNameId } from "./scenario.ts"

export const BEGIN = "<!-- BEGIN scenario reference: generated from sim/scenario/scenario.ts by scripts/scenario-reference.ts --write; do not edit by hand -->"
export const END = "<!-- END scenario reference -->"

interface Field {
  readonly name: string
  readonly type: AST.AST
  readonly optional: boolean
  readonly default: Option.Option<unknown>
}

const annotation = <T>(ast: AST.AST, id: symbol): T | undefined => ast.annotations[id] as T | undefined

/** The type without its `| undefined` (an optional field's encoded side). */
const present = (ast: AST.AST): AST.AST => {
  if (!AST.isUnion(ast)) return ast
  const rest = ast.types.filter((t) => !AST.isUndefinedKeyword(t))
  return rest.length === 1 ? rest[0]! : AST.Union.make(rest, ast.annotations)
}

/** The object a field holds, if it is one (a struct with or without defaults). */
const objectOf = (ast: AST.AST): { literal: AST.TypeLiteral; defaults: Map<PropertyKey, () => Option.Option<unknown>> } | null => {
  if (AST.isTypeLiteral(ast) && ast.propertySignatures.length > 0) return { literal: ast, defaults: new Map() }
  if (AST.isTransformation(ast) && AST.isTypeLiteralTransformation(ast.transformation) && AST.isTypeLiteral(ast.from)) {
    const defaults = new Map(ast.transformation.propertySignatureTransformations.map((t) => [t.from, () => t.decode(Option.none())] as const))
    return { literal: ast.from, defaults }
  }
  return null
}

const fieldsOf = (o: NonNullable<ReturnType<typeof objectOf>>): Field[] =>
  o.literal.propertySignatures.map((p) => ({ name: String(p.name), type: present(p.type), optional: p.isOptional, default: o.defaults.get(p.name)?.() ?? Option.none() }))

/** A list's element type (through a minItems refinement). */
const elementOf = (ast: AST.AST): AST.AST | null => {
  const base = AST.isRefinement(ast) ? ast.from : ast
  return AST.isTupleType(base) && base.elements.length === 0 && base.rest.length === 1 ? base.rest[0]!.type : null
}

/** A union of objects told apart by a `kind` literal: each member by its kind. */
const kindsOf = (ast: AST.AST): Array<{ kind: string; ast: AST.AST }> | null => {
  if (!AST.isUnion(ast)) return null
  const out: Array<{ kind: string; ast: AST.AST }> = []
  for (const t of ast.types) {
    const o = objectOf(t)
    const kind = o?.literal.propertySignatures.find((p) => p.name === "kind")?.type
    if (kind === undefined || !AST.isLiteral(kind)) return null
    out.push({ kind: String(kind.literal), ast: t })
  }
  return out
}

const range = (lo: unknown, hi: unknown): string => `${String(lo)}–${String(hi)}`

/** The type as a person reads it: `integer 1–1000`, `duration`, `"yes" | "no"`, `[integer 0–60000, integer 0–60000]`. */
export const typeText = (ast: AST.AST): string => {
  const name = annotation<string>(ast, TypeNameId)
  if (name !== undefined) return name
  if (AST.isRefinement(ast)) {
    const js = Option.getOrElse(AST.getJSONSchemaAnnotation(ast), () => ({})) as Record<string, unknown>
    if (js.type === "integer") return "integer"
    const base = typeText(ast.from)
    if ("minimum" in js && "maximum" in js) return `${base} ${range(js.minimum, js.maximum)}`
    if ("minLength" in js) return `${base}, at least ${String(js.minLength)} character`
    if ("minItems" in js) return `${base}, at least ${String(js.minItems)}`
    return base
  }
  if (AST.isUnion(ast)) return ast.types.filter((t) => !AST.isUndefinedKeyword(t)).map(typeText).join(" \\| ")
  if (AST.isLiteral(ast)) return JSON.stringify(ast.literal)
  if (AST.isTupleType(ast)) {
    const element = elementOf(ast)
    if (element !== null) {
      const inner = typeText(element)
      return objectOf(element) !== null || kindsOf(element) !== null ? "list" : `list of ${inner}`
    }
    return `[${ast.elements.map((e) => typeText(e.type)).join(", ")}]`
  }
  if (AST.isTypeLiteral(ast) && ast.indexSignatures.length > 0) {
    const s = ast.indexSignatures[0]!
    return `{ ${typeText(s.parameter)}: ${typeText(s.type)} }`
  }
  if (objectOf(ast) !== null) return "object"
  if (AST.isStringKeyword(ast)) return "string"
  if (AST.isNumberKeyword(ast)) return "number"
  if (AST.isBooleanKeyword(ast)) return "boolean"
  return String(ast)
}

const defaultText = (f: Field): string => {
  if (Option.isSome(f.default)) {
    const v = f.default.value
    if (typeText(f.type) === "duration") return `${String(v)} s`
    if (typeof v === "object" && v !== null && !Array.isArray(v)) return "(each field's default)"
    return `\`${JSON.stringify(v)}\``
  }
  return f.optional ? "absent" : "**required**"
}

const cell = (t: string): string => t.replaceAll("|", "\\|").replaceAll("\n", " ")

const row = (f: Field): string => {
  const meaning = annotation<string>(f.type, DocId) ?? ""
  return `| \`${f.name}\` | ${typeText(f.type)} | ${defaultText(f)} | ${cell(meaning)} |`
}

const table = (title: string, fields: ReadonlyArray<Field>): string[] =>
  fields.length === 0 ? [] : [title, "", "| field | type | default | meaning |", "|---|---|---|---|", ...fields.map(row), ""]

/** Renders an object's table, then each of its nested objects, lists of objects and kinds, depth first. */
const renderObject = (path: string, ast: AST.AST, out: string[]): void => {
  const fields = fieldsOf(objectOf(ast)!)
  out.push(...table(path === "" ? "**Top level**" : `**\`${path}\`**`, fields))
  for (const f of fields) {
    const at = path === "" ? f.name : `${path}.${f.name}`
    const element = elementOf(f.type)
    if (objectOf(f.type) !== null) renderObject(at, f.type, out)
    else if (element !== null && objectOf(element) !== null) renderObject(`${at}[]`, element, out)
    else if (element !== null && kindsOf(element) !== null) renderKinds(`${at}[]`, kindsOf(element)!, out)
  }
}

/** A list of kinds: the fields every kind has (same type and default), then each kind's own. */
const renderKinds = (path: string, kinds: ReadonlyArray<{ kind: string; ast: AST.AST }>, out: string[]): void => {
  const each = kinds.map((k) => ({ kind: k.kind, fields: fieldsOf(objectOf(k.ast)!).filter((f) => f.name !== "kind") }))
  const common = each[0]!.fields.filter((f) => each.every((k) => k.fields.some((g) => g.name === f.name && row(g) === row(f))))
  const names = new Set(common.map((f) => f.name))
  out.push(...table(`**\`${path}\`**, every \`kind\` (${kinds.map((k) => `\`${k.kind}\``).join(", ")})`, common))
  for (const k of each) {
    const own = k.fields.filter((f) => !names.has(f.name))
    out.push(own.length === 0 ? `**\`${path}\` \`"kind": "${k.kind}"\`**: no other field\n` : table(`**\`${path}\` \`"kind": "${k.kind}"\`**`, own).join("\n"))
  }
}

/** The reference as Markdown, between the markers. */
export const scenarioReference = (): string => {
  const out: string[] = []
  renderObject("", Scenario.ast, out)
  return [BEGIN, "", ...out, END].join("\n").replace(/\n{3,}/g, "\n\n")
}
