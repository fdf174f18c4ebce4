/**
 * TypeBox schemas as OpenAPI 3.1 (JSON Schema 2020-12) with named components: every schema
 * that carries a `title` is written once under `components.schemas[title]` and referenced
 * everywhere it is used. Two different schemas with one title are a programming error.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonSchema = { [key: string]: Json };

/** Keywords whose value is one subschema, a list of them, or a map of them. */
const ONE_SCHEMA = new Set(["items", "additionalProperties", "not", "contains", "if", "then", "else", "propertyNames"]);
const SCHEMA_LIST = new Set(["anyOf", "oneOf", "allOf", "prefixItems"]);
const SCHEMA_MAP = new Set(["properties", "patternProperties", "$defs"]);

export class SchemaComponents {
  readonly schemas = new Map<string, JsonSchema>();

  /** The schema as JSON Schema; a titled schema becomes a `$ref` to its component. */
  toJson(schema: unknown): JsonSchema {
    return this.convert(schema, false) as JsonSchema;
  }

  /** Components sorted by name, for a stable document. */
  sorted(): Record<string, JsonSchema> {
    return Object.fromEntries([...this.schemas.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  private convert(node: unknown, isComponent: boolean): Json {
    if (Array.isArray(node)) return node.map((item) => this.convert(item, false));
    if (typeof node !== "object" || node === null) return node as Json;
    const source = node as Record<string, unknown>;
    if (!isComponent && typeof source.title === "string") return this.reference(source.title, source);
    const out: JsonSchema = {};
    // Object.entries leaves out TypeBox's symbol keys (Kind, Optional).
    for (const [key, value] of Object.entries(source)) {
      if (value === undefined) continue;
      if (SCHEMA_MAP.has(key) && typeof value === "object" && value !== null) {
        out[key] = Object.fromEntries(Object.entries(value).map(([name, child]) => [name, this.convert(child, false)]));
      } else if (SCHEMA_LIST.has(key) || ONE_SCHEMA.has(key)) {
        out[key] = this.convert(value, false);
      } else {
        out[key] = structuredClone(value) as Json;
      }
    }
    return simplifyUnion(out);
  }

  private reference(name: string, schema: Record<string, unknown>): JsonSchema {
    const converted = this.convert(schema, true) as JsonSchema;
    const existing = this.schemas.get(name);
    if (existing && JSON.stringify(existing) !== JSON.stringify(converted)) {
      throw new Error(`two different schemas are named ${name}: give one of them another title`);
    }
    this.schemas.set(name, converted);
    return { $ref: `#/components/schemas/${name}` };
  }
}

/**
 * What TypeBox writes as `anyOf` is written the way generators read best: a union of string
 * constants as an `enum`, and "X or null" of a plain type as `type: [X, "null"]`.
 */
function simplifyUnion(schema: JsonSchema): JsonSchema {
  const members = schema.anyOf;
  if (!Array.isArray(members) || members.length === 0) return schema;
  const { anyOf: _, ...rest } = schema;
  const objects = members as JsonSchema[];
  if (objects.every((m) => typeof m.const === "string" && m.type === "string")) {
    return { ...rest, type: "string", enum: objects.map((m) => m.const!) };
  }
  const nonNull = objects.filter((m) => m.type !== "null");
  const only = nonNull[0];
  if (objects.length === 2 && nonNull.length === 1 && only && typeof only.type === "string") {
    return { ...only, ...rest, type: [only.type, "null"] };
  }
  return schema;
}
