import { listJurisdictions, upsertJurisdiction } from "../auth/store";
import { validationFailed } from "../errors";
import { optionalString, requiredString } from "./args";
import type { Command } from "./command";

const SLUG_PATTERN = /^[a-z][a-z0-9-]{0,63}$/;

export const jurisdictionCommands: Command[] = [
  {
    name: "jurisdiction add",
    summary: "Add (or rename) a jurisdiction",
    usage: "regkb jurisdiction add --slug S --name N [--description D]",
    flags: { slug: "string", name: "string", description: "string" },
    async run({ flags, deps }) {
      const jurisdiction = {
        slug: requiredString(flags, "slug"),
        name: requiredString(flags, "name"),
        description: optionalString(flags, "description") ?? "",
      };
      if (!SLUG_PATTERN.test(jurisdiction.slug)) throw validationFailed("slug must be lower-case letters, digits and hyphens, starting with a letter");
      if (jurisdiction.name.length > 200 || jurisdiction.description.length > 1000) throw validationFailed("name ≤ 200 and description ≤ 1000 characters");
      upsertJurisdiction((await deps()).db, jurisdiction);
      return { json: jurisdiction, text: `jurisdiction ${jurisdiction.slug} (${jurisdiction.name}) saved` };
    },
  },
  {
    name: "jurisdiction list",
    summary: "List all jurisdictions",
    usage: "regkb jurisdiction list",
    flags: {},
    async run({ deps }) {
      const jurisdictions = listJurisdictions((await deps()).db);
      const text = jurisdictions.map((j) => `${j.slug.padEnd(8)} ${j.name}`).join("\n") || "no jurisdictions";
      return { json: { jurisdictions }, text };
    },
  },
];
