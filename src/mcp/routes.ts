import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { Kind, TypeRegistry, type TSchema } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import type { Deps } from "../deps";
import { requireApiKey } from "../http/auth";
import { validationFailed } from "../errors";
import { operation } from "../http/operation";
import { MCP_PATH } from "../http/route-table";
import { Integer, Text } from "../http/schema";
import { handleMcpRequest } from "./server";
import { TOOLS } from "./tools";

const METHOD_CHARS_MAX = 200;

/** A JSON-RPC id: a string or an integer (or null in a reply), written as one schema with a list of types. */
TypeRegistry.Set<TSchema & { type: string[] }>(
  "JsonRpcId",
  (schema, value) => typeof value === "string" || Number.isSafeInteger(value) || (value === null && schema.type.includes("null")),
);
const RequestId = (types: string[], description: string) =>
  ({ [Kind]: "JsonRpcId", type: types, description }) as unknown as TSchema & { static: string | number | null };

/** One JSON-RPC message a client sends: a request (with id) or a notification. Batches are refused. */
const McpMessage = t.Object(
  {
    jsonrpc: t.Literal("2.0", { examples: ["2.0"] }),
    id: t.Optional(RequestId(["string", "integer"], "Present on a request (a string or an integer), absent on a notification.")),
    method: Text({ minLength: 1, maxLength: METHOD_CHARS_MAX, description: "initialize, tools/list, tools/call, resources/list, resources/read, …", examples: ["tools/list"] }),
    params: t.Optional(t.Record(t.String(), t.Unknown())),
  },
  { title: "McpMessage", description: "One JSON-RPC 2.0 message of the Model Context Protocol (one per request: batches are refused)." },
);

const McpReply = t.Object(
  {
    jsonrpc: t.Literal("2.0"),
    id: RequestId(["string", "integer", "null"], "The request's id; null when the request could not be read."),
    result: t.Optional(t.Record(t.String(), t.Unknown(), { description: "The method's result; a tool's failure is a result with isError: true." })),
    error: t.Optional(
      t.Object({ code: Integer(), message: t.String(), data: t.Optional(t.Unknown()) }, { description: "A protocol error (unknown method or tool, resource not found)." }),
    ),
  },
  { title: "McpReply", description: "The JSON-RPC 2.0 response to the request's message." },
);

const DESCRIPTION = `The Model Context Protocol (MCP) for AI assistants: the Streamable HTTP transport, stateless (no
session, no SSE stream: each request is answered with JSON), authenticated with the organisation's API key exactly like /v1
(401 before anything else is looked at). Send one JSON-RPC message per request with
\`Accept: application/json, text/event-stream\`; a notification is answered 202 with no body. GET and DELETE answer 405
(\`Allow: POST\`); a request whose Origin header is not this server's public URL is 403 (DNS-rebinding protection).
Errors of the HTTP request (key, rate limit, media type, size, a body that is not one JSON-RPC message) use the Error body;
errors of the transport (403, 405, 406) and inside the protocol are JSON-RPC errors, and a tool that fails answers a result
with \`isError: true\` whose text is the API's Error body (\`insufficient_credit\`, \`invalid_jurisdictions\`, \`not_found\`, …).

Tools (\`tools/list\` gives their schemas), priced and limited like the API:
${TOOLS.map((tool) => `- \`${tool.name}\`: ${tool.title.toLowerCase()}; ${tool.price}.`).join("\n")}

Each \`tools/call\` is one operation: paid tools take an optional \`idempotencyKey\` argument with the Idempotency-Key's rules (this
endpoint refuses the header itself). Charges show in the ledger as "Search (MCP)" and "screening … (MCP)". Resources:
\`regkb://jurisdictions\` and \`regkb://jurisdictions/{slug}/provisions\` for each enabled jurisdiction.`;

/** POST /mcp, and the 405 a stateless server answers to GET and DELETE. */
export function mcpRoutes(deps: Deps) {
  const shared = { jsonSchemaValidator: new AjvJsonSchemaValidator() };
  // A browser's request names its page's origin: only the server's own may call (the MCP
  // transport's DNS-rebinding rule; the Host header is the attacker's to choose, so not that).
  const publicOrigin = new URL(deps.config.publicUrl).origin;
  return new Elysia()
    .use(requireApiKey())
    .post(
      MCP_PATH,
      ({ auth, body, request }) => {
        const origin = request.headers.get("origin");
        if (origin !== null && origin !== publicOrigin) return transportRefusal(403, "Forbidden: the Origin header names another site");
        if (request.headers.has("idempotency-key")) {
          throw validationFailed("header.idempotency-key: /mcp takes no Idempotency-Key header; pass idempotencyKey in a paid tool's arguments");
        }
        return handleMcpRequest({ deps, orgId: auth.orgId, request }, body, shared);
      },
      {
        // Before the schema, so a batch hears why rather than which field it lacks.
        transform({ body }) {
          if (Array.isArray(body)) throw validationFailed("body: send one JSON-RPC message per request (batches are not accepted)");
        },
        body: McpMessage,
        response: { 200: McpReply },
        detail: operation({
          operationId: "mcp",
          summary: "Model Context Protocol endpoint",
          description: DESCRIPTION,
          tag: "MCP",
          noIdempotencyHeader: true,
        }),
      },
    )
    .get(MCP_PATH, methodNotAllowed, { detail: { hide: true } })
    .delete(MCP_PATH, methodNotAllowed, { detail: { hide: true } });
}

/** This server opens no stream and keeps no session. */
function methodNotAllowed(): Response {
  return transportRefusal(405, "Method not allowed: this stateless MCP server takes POST only (no SSE stream, no session)", { allow: "POST" });
}

/** A refusal of the MCP transport itself, written as the SDK writes its own (406, 400): a JSON-RPC error. */
function transportRefusal(status: number, message: string, headers: Record<string, string> = {}): Response {
  const body = { jsonrpc: "2.0", error: { code: -32000, message }, id: null };
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
}
