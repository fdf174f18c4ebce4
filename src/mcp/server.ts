import { Server, type ServerOptions } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { searchPence } from "../billing/pricing";
import { refusalOf } from "../http/error-handler";
import { VERSION } from "../version";
import { callTool } from "./call";
import { listResources, readResource, RESOURCE_TEMPLATES } from "./resources";
import { jsonSchemaOf, type McpContext, type ToolSpec } from "./tool";
import { TOOLS } from "./tools";

const INSTRUCTIONS = `regkb is this organisation's regulatory knowledge base: the laws of the jurisdictions enabled for it, and its own policy documents.
Find passages with search_regulations (${searchPence} pence a call) and read a whole article or section with get_provision (free). Quote the
citationPath and source of every passage you rely on. list_jurisdictions gives the jurisdictions you may search; the resource
regkb://jurisdictions/{slug}/provisions lists each one's provisions. Errors carry the API's code: insufficient_credit means
nothing ran and nothing was charged (get_balance shows the credit left).`;

const TOOLS_BY_NAME = new Map(TOOLS.map((tool) => [tool.name, tool]));
/** tools/list's answer: the same for every organisation and request. */
const TOOL_LIST = TOOLS.map(describeTool);
const TOOL_NAME_ECHO_CHARS_MAX = 64;

/**
 * One POST /mcp: the stateless Streamable HTTP transport, answering with JSON (no SSE stream,
 * no session), and a server made for this request alone, which knows its organisation. The
 * transport and server hold nothing between requests. `shared`: what is built once per app
 * (the JSON Schema validator, about 0.5 ms to make).
 */
export async function handleMcpRequest(context: McpContext, message: unknown, shared: Pick<ServerOptions, "jsonSchemaValidator">): Promise<Response> {
  const server = mcpServer(context, shared);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    return await transport.handleRequest(context.request, { parsedBody: message });
  } finally {
    await server.close();
  }
}

// The SDK's low-level Server: the tools' schemas are the API's TypeBox schemas, checked with the
// API's rules and messages, which McpServer (zod schemas) would restate.
function mcpServer(context: McpContext, shared: Pick<ServerOptions, "jsonSchemaValidator">): Server {
  const server = new Server(
    { name: "regkb", title: "regkb regulatory knowledge base", version: VERSION },
    { capabilities: { tools: {}, resources: {} }, instructions: INSTRUCTIONS, ...shared },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOL_LIST }));
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const tool = TOOLS_BY_NAME.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name.slice(0, TOOL_NAME_ECHO_CHARS_MAX)}`);
    return callTool(context, tool, request.params.arguments);
  });
  server.setRequestHandler(ListResourcesRequestSchema, () => guarded(context, () => listResources(context)));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: RESOURCE_TEMPLATES }));
  server.setRequestHandler(ReadResourceRequestSchema, (request) => guarded(context, () => readResource(context, request.params.uri)));
  return server;
}

function describeTool(tool: ToolSpec): Tool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: jsonSchemaOf(tool.input),
    outputSchema: jsonSchemaOf(tool.output),
    annotations: { title: tool.title, readOnlyHint: tool.readOnly, destructiveHint: false, idempotentHint: tool.readOnly, openWorldHint: false },
  };
}

/**
 * A request other than a tool call fails as a JSON-RPC error carrying the API's Error body as
 * its data; an unexpected fault is logged and named by the request id only (the SDK would
 * otherwise send the error's own message).
 */
function guarded<T>(context: McpContext, work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof McpError) throw error;
    const refusal = refusalOf(context.deps, context.request, error);
    throw new McpError(ErrorCode.InternalError, `${refusal.code}: ${refusal.details}`, refusal.body());
  }
}
