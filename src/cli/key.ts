import { createApiKey, requireOrganisation, revokeApiKey } from "../auth/service";
import { listApiKeys } from "../auth/store";
import { isoFromMs } from "../clock";
import { optionalString, requiredString } from "./args";
import type { Command } from "./command";

export const keyCommands: Command[] = [
  {
    name: "key create",
    summary: "Create an API key (shown once)",
    usage: "regkb key create --org ID [--name N]",
    flags: { org: "string", name: "string" },
    async run({ flags, deps }) {
      const created = createApiKey(await deps(), { orgId: requiredString(flags, "org"), name: optionalString(flags, "name") });
      return {
        json: { id: created.id, name: created.name, key: created.key },
        text: `API key ${created.id} (${created.name}) — shown once, store it now:\n${created.key}`,
      };
    },
  },
  {
    name: "key list",
    summary: "List an organisation's API keys (never the secrets)",
    usage: "regkb key list --org ID",
    flags: { org: "string" },
    async run({ flags, deps }) {
      const d = await deps();
      const orgId = requiredString(flags, "org");
      requireOrganisation(d, orgId);
      const keys = listApiKeys(d.db, orgId).map((k) => ({
        id: k.id,
        name: k.name,
        prefix: k.displayPrefix,
        createdAt: isoFromMs(k.createdAtMs),
        lastUsedAt: k.lastUsedAtMs === null ? null : isoFromMs(k.lastUsedAtMs),
        revokedAt: k.revokedAtMs === null ? null : isoFromMs(k.revokedAtMs),
      }));
      const text = keys.map((k) => `${k.id}  ${k.prefix}  ${k.name}${k.revokedAt ? "  (revoked)" : ""}`).join("\n") || "no keys";
      return { json: { keys }, text };
    },
  },
  {
    name: "key revoke",
    summary: "Revoke an API key",
    usage: "regkb key revoke --id ID",
    flags: { id: "string" },
    async run({ flags, deps }) {
      const id = requiredString(flags, "id");
      revokeApiKey(await deps(), id);
      return { json: { id, revoked: true }, text: `API key ${id} revoked` };
    },
  },
];
