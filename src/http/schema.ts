import { Kind, Type, TypeRegistry, type SchemaOptions, type TInteger, type TSchema } from "@sinclair/typebox";
import { UUID_PATTERN } from "../ids";

/**
 * Schema builders for request fields whose checks must follow JSON Schema to the letter:
 * lengths in characters (code points, not UTF-16 units) and integers that are JSON numbers,
 * never numeric strings. Elysia's own `t.Integer` accepts "3"; TypeBox's `maxLength` counts
 * an emoji as two. Both read the same in the OpenAPI document.
 */

export function codePointLength(value: string): number {
  let count = 0;
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    // A high surrogate followed by a low one is one character.
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < value.length) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    count++;
  }
  return count;
}

export interface TextOptions extends SchemaOptions {
  minLength?: number;
  maxLength: number;
  /** Refuses a value made only of white space. */
  notBlank?: boolean;
}

export interface TText extends TSchema {
  [Kind]: "Text";
  static: string;
  type: "string";
  minLength?: number;
  maxLength: number;
  pattern?: string;
}

const NOT_BLANK_PATTERN = "\\S";
const patterns = new Map<string, RegExp>();

TypeRegistry.Set<TText>("Text", (schema, value) => {
  if (typeof value !== "string") return false;
  const length = codePointLength(value);
  if (length > schema.maxLength || length < (schema.minLength ?? 0)) return false;
  if (schema.pattern === undefined) return true;
  let pattern = patterns.get(schema.pattern);
  if (!pattern) patterns.set(schema.pattern, (pattern = new RegExp(schema.pattern, "u")));
  return pattern.test(value);
});

/** A string of `minLength` to `maxLength` characters, counted as code points. */
export function Text(options: TextOptions): TText {
  const { notBlank, ...rest } = options;
  return { ...rest, ...(notBlank ? { pattern: NOT_BLANK_PATTERN } : {}), [Kind]: "Text", type: "string" } as TText;
}

export interface IntegerOptions extends SchemaOptions {
  minimum?: number;
  maximum?: number;
  default?: number;
}

/**
 * A JSON integer, never a numeric string (Elysia's `t.Integer` takes "3" and is written as
 * string-or-integer in the document). Query strings are converted strictly by apiGuard.
 */
export function Integer(options: IntegerOptions = {}): TInteger {
  return Type.Integer(options);
}

/** The `{id}` of a resource path. A malformed id answers 404 (error-handler.ts), since no resource can have it. */
export const UuidParams = Type.Object({
  id: Type.String({ format: "uuid", pattern: UUID_PATTERN.source, description: "The resource's id (a UUID)." }),
});

/** What the rule of a failing field is, in words: "must be an integer from 1 to 50". */
export function describeRule(schema: Record<string, unknown> | undefined, value: unknown): string | undefined {
  if (!schema) return undefined;
  if (value === undefined) return "is required";
  if (schema.type === "integer") {
    const range =
      typeof schema.maximum === "number" ? `from ${schema.minimum} to ${schema.maximum}` : `of at least ${schema.minimum}`;
    return typeof schema.minimum === "number" ? `must be an integer ${range}` : "must be an integer";
  }
  if (schema.type === "string") {
    if (typeof value !== "string") return "must be a string";
    const length = codePointLength(value);
    const min = typeof schema.minLength === "number" ? schema.minLength : 0;
    if (typeof schema.maxLength === "number" && (length > schema.maxLength || length < min)) {
      return `must be ${min} to ${schema.maxLength} characters (found ${length})`;
    }
    if (schema.pattern === NOT_BLANK_PATTERN) return "must not be blank";
    if (typeof schema.format === "string") return `must be a ${schema.format}`;
  }
  if (schema.type === "array" && Array.isArray(value)) {
    if (typeof schema.maxItems === "number" && (value.length > schema.maxItems || value.length < Number(schema.minItems ?? 0))) {
      return `must have ${schema.minItems ?? 0} to ${schema.maxItems} items (found ${value.length})`;
    }
  }
  if (schema.type === "object" && (typeof value !== "object" || value === null || Array.isArray(value))) return "must be a JSON object";
  return undefined;
}
