import { McpError, type ListResourcesResult, type ReadResourceResult, type ResourceTemplate } from "@modelcontextprotocol/sdk/types.js";
import { listEnabledJurisdictions } from "../auth/store";
import { provisionIndex } from "../search/provisions";
import type { McpContext } from "./tool";

/** MCP's "resource not found" error code. */
const RESOURCE_NOT_FOUND = -32002;
const JURISDICTIONS_URI = "regkb://jurisdictions";
const PROVISIONS_URI = /^regkb:\/\/jurisdictions\/([^/]+)\/provisions$/;
const JSON_TYPE = "application/json";

const provisionsUri = (slug: string) => `regkb://jurisdictions/${encodeURIComponent(slug)}/provisions`;

export const RESOURCE_TEMPLATES: ResourceTemplate[] = [
  {
    uriTemplate: "regkb://jurisdictions/{slug}/provisions",
    name: "provisions",
    title: "A jurisdiction's provisions",
    description:
      "Every article or section the knowledge base holds for one enabled jurisdiction: its citation (to pass to get_provision), heading, source and number of passages.",
    mimeType: JSON_TYPE,
  },
];

/** The jurisdictions resource and one provisions index per enabled jurisdiction. */
export function listResources(context: McpContext): ListResourcesResult {
  const jurisdictions = listEnabledJurisdictions(context.deps.db, context.orgId);
  return {
    resources: [
      {
        uri: JURISDICTIONS_URI,
        name: "jurisdictions",
        title: "Jurisdictions",
        description: "The jurisdictions enabled for this organisation (slug, name, description), as list_jurisdictions returns them.",
        mimeType: JSON_TYPE,
      },
      ...jurisdictions.map((j) => ({
        uri: provisionsUri(j.slug),
        name: `${j.slug}-provisions`,
        title: `${j.name}: provisions`,
        description: `Every article or section of ${j.name} in the knowledge base, with the citation get_provision reads it by.`,
        mimeType: JSON_TYPE,
      })),
    ],
  };
}

/** A resource of an enabled jurisdiction; anything else is "resource not found". */
export function readResource(context: McpContext, uri: string): ReadResourceResult {
  const jurisdictions = listEnabledJurisdictions(context.deps.db, context.orgId);
  if (uri === JURISDICTIONS_URI) return json(uri, { jurisdictions });
  const match = PROVISIONS_URI.exec(uri);
  const slug = match ? decodeSlug(match[1]!) : undefined;
  const jurisdiction = jurisdictions.find((j) => j.slug === slug);
  if (!jurisdiction) throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${uri.slice(0, 200)}`, { uri: uri.slice(0, 200) });
  const { provisions, truncated } = provisionIndex(context.deps.searchIndex.db, context.orgId, jurisdiction.slug);
  return json(uri, { jurisdiction, provisions, truncated });
}

function decodeSlug(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

function json(uri: string, value: unknown): ReadResourceResult {
  return { contents: [{ uri, mimeType: JSON_TYPE, text: JSON.stringify(value) }] };
}
