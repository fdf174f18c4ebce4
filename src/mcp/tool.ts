import type { Static, TObject } from "@sinclair/typebox";
import { t } from "elysia";
import type { Deps } from "../deps";
import { IDEMPOTENCY_KEY_LENGTH_MAX } from "../http/idempotency";

/** What every MCP request's handlers know: the organisation the key belongs to, and the HTTP request (its id, for the log). */
export interface McpContext {
  deps: Deps;
  orgId: string;
  request: Request;
}

/** A tool call in progress: its operation id keys its ledger entries and names what it creates. */
export interface ToolRun extends McpContext {
  operationId: string;
}

export interface ToolOutput {
  /** The tool's structuredContent: an instance of its output schema. */
  structured: Record<string, unknown>;
  /** A short rendering for a model to read, with citations. */
  text: string;
}

/**
 * One MCP tool: its schemas are the API's own TypeBox schemas (same limits, same checks), and
 * `run` calls the same service function as the matching /v1 route.
 */
export interface ToolSpec<Input extends TObject = TObject> {
  name: string;
  title: string;
  description: string;
  /** For the README and the OpenAPI document: "2 pence", "free", … */
  price: string;
  input: Input;
  output: TObject;
  /** Free tools only read; paid ones write to the ledger (and take an idempotencyKey). */
  readOnly: boolean;
  run(run: ToolRun, args: Static<Input>): ToolOutput | Promise<ToolOutput>;
}

export function defineTool<Input extends TObject>(spec: ToolSpec<Input>): ToolSpec {
  return spec as unknown as ToolSpec;
}

/** Arguments of a tool that takes no arguments. */
export const NoArguments = t.Object({}, { additionalProperties: false });

/**
 * The paid tools' retry key: the API's Idempotency-Key, passed as an argument because an
 * assistant sets arguments, not HTTP headers. Same store, scope and rules.
 */
export const IdempotencyKeyArgument = t.String({
  minLength: 1,
  maxLength: IDEMPOTENCY_KEY_LENGTH_MAX,
  pattern: "^[\\x20-\\x7E]+$",
  description:
    `Optional retry key (1–${IDEMPOTENCY_KEY_LENGTH_MAX} printable ASCII characters), kept 24 hours for the organisation. Set it only to retry a ` +
    "call whose result never arrived: the same key with the same arguments returns the first result and is not charged again; " +
    "with other arguments it is the error idempotency_key_reused. Omit it otherwise.",
});

/** A TypeBox schema as plain JSON Schema (its symbol keys dropped), as MCP lists it. */
export function jsonSchemaOf(schema: TObject): { type: "object"; [key: string]: unknown } {
  return JSON.parse(JSON.stringify(schema)) as { type: "object"; [key: string]: unknown };
}

/** At most `max` characters (code points), with "…" when cut. */
export function clip(text: string, max: number): string {
  const characters = Array.from(text);
  return characters.length <= max ? text : `${characters.slice(0, max).join("").trimEnd()}…`;
}

/** "GDPR > Article 33 > 1–2 — Regulation (EU) 2016/679 (…) [eu]": where a passage sits and what it is from. */
export function citationLine(passage: { citationPath?: string; source?: string; jurisdictionSlugs?: string[]; title?: string }): string {
  const path = passage.citationPath ?? "(no citation)";
  const title = passage.title && !path.includes(passage.title) ? ` (${passage.title})` : "";
  const slugs = passage.jurisdictionSlugs && passage.jurisdictionSlugs.length > 0 ? ` [${passage.jurisdictionSlugs.join(", ")}]` : "";
  return `${path}${title} — ${passage.source ?? "unknown source"}${slugs}`;
}
