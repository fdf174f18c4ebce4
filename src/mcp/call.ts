import type { TObject, TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { refusalOf } from "../http/error-handler";
import { validationFailed, type Refusal } from "../errors";
import {
  claimIdempotencyKey,
  finishIdempotentRequest,
  IDEMPOTENCY_KEY_LENGTH_MAX,
  isIdempotencyKey,
  releaseIdempotencyKey,
  type IdempotencyClaim,
} from "../http/idempotency";
import { describeRule } from "../http/schema";
import { uuidv7 } from "../ids";
import type { McpContext, ToolSpec } from "./tool";

/** Marks a result replayed under an idempotencyKey (the API's Idempotent-Replayed header). */
export const REPLAYED_META_KEY = "regkb/idempotentReplayed";

/**
 * One tools/call, which is one operation: arguments checked against the tool's schema (the
 * API's rules and wording, `arguments.topK: must be an integer from 1 to 50`); its operation
 * id fresh, or with an idempotencyKey the one fixed when the key was first claimed (the API's
 * Idempotency-Key store, route "tools/call <name>"), so its ledger keys (`search:<id>`,
 * `reserve:<id>`) find a retry's charge instead of writing another. Every failure is a tool
 * error carrying the API's Error body; nothing here is a transport failure.
 */
export async function callTool(context: McpContext, tool: ToolSpec, rawArguments: unknown): Promise<CallToolResult> {
  let claim: IdempotencyClaim | undefined;
  try {
    const { idempotencyKey, ...args } = checkArguments(tool.input, rawArguments);
    let operationId = uuidv7();
    if (typeof idempotencyKey === "string") {
      const request = { orgId: context.orgId, key: idempotencyKey, method: "MCP", route: `tools/call ${tool.name}`, body: args };
      const outcome = await claimIdempotencyKey(context.deps, request);
      if (outcome.kind === "replay") return { ...(JSON.parse(outcome.body) as CallToolResult), _meta: { [REPLAYED_META_KEY]: true } };
      claim = outcome.claim;
      operationId = claim.operationId;
    }
    const output = await tool.run({ ...context, operationId }, args);
    const result: CallToolResult = { content: [{ type: "text", text: output.text }], structuredContent: output.structured };
    if (claim) finishIdempotentRequest(context.deps, claim, { status: 200, contentType: "application/json", body: JSON.stringify(result) });
    return result;
  } catch (error) {
    return toolError(refusalOf(context.deps, context.request, error));
  } finally {
    // An error stores nothing: the key is free for a retry at once, as on /v1.
    if (claim) releaseIdempotencyKey(context.deps, claim);
  }
}

/** The API's Error body as the tool error's text: `{"error":"insufficient_credit","details":"available 0 pence, required 2 pence"}`. */
function toolError(refusal: Refusal): CallToolResult {
  return { isError: true, content: [{ type: "text", text: JSON.stringify(refusal.body()) }] };
}

/** The arguments with their defaults, or validation_failed naming the first bad one. */
function checkArguments(schema: TObject, raw: unknown): Record<string, unknown> {
  const value = raw ?? {};
  if (typeof value !== "object" || Array.isArray(value)) throw validationFailed("arguments: must be a JSON object");
  const names = Object.keys(schema.properties);
  const unknown = Object.keys(value).find((name) => !names.includes(name));
  if (unknown !== undefined) {
    const takes = names.length === 0 ? "none" : names.join(", ");
    throw validationFailed(`arguments.${unknown.slice(0, 64)}: is not an argument of this tool (it takes ${takes})`);
  }
  const key = (value as { idempotencyKey?: unknown }).idempotencyKey;
  if (key !== undefined && !(typeof key === "string" && isIdempotencyKey(key))) {
    throw validationFailed(`arguments.idempotencyKey: must be 1 to ${IDEMPOTENCY_KEY_LENGTH_MAX} printable ASCII characters`);
  }
  const args = Value.Default(schema, structuredClone(value)) as Record<string, unknown>;
  const error = Value.Errors(schema, args).First();
  if (error) {
    const rule = describeRule(error.schema as TSchema as Record<string, unknown>, error.value) ?? error.message;
    throw validationFailed(`arguments${error.path.replace(/\//g, ".")}: ${rule}`);
  }
  return args;
}
