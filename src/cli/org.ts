import { createOrganisation, requireOrganisation, setOrganisationJurisdictions, ORGANISATIONS_LIST_MAX } from "../auth/service";
import { listEnabledJurisdictions, listOrganisations } from "../auth/store";
import { optionalInteger, requiredString, slugList } from "./args";
import type { Command } from "./command";

const ALLOWANCE_PENCE_MAX = 100_000_000;

export const orgCommands: Command[] = [
  {
    name: "org create",
    summary: "Create an organisation",
    usage: "regkb org create --name N [--jurisdictions eu,us-ny] [--monthly-allowance-pence N]",
    flags: { name: "string", jurisdictions: "string", "monthly-allowance-pence": "string" },
    async run({ flags, deps }) {
      const org = createOrganisation(await deps(), {
        name: requiredString(flags, "name"),
        jurisdictions: slugList(flags.jurisdictions as string | undefined),
        monthlyAllowancePence: optionalInteger(flags, "monthly-allowance-pence", 0, ALLOWANCE_PENCE_MAX),
      });
      const json = { id: org.id, name: org.name, jurisdictions: org.jurisdictions, monthlyAllowancePence: org.monthlyAllowancePence };
      return { json, text: `created organisation ${org.id} (${org.name}) with jurisdictions: ${org.jurisdictions.join(", ") || "none"}` };
    },
  },
  {
    name: "org list",
    summary: "List organisations",
    usage: "regkb org list",
    flags: {},
    async run({ deps }) {
      const d = await deps();
      const organisations = listOrganisations(d.db, ORGANISATIONS_LIST_MAX).map((o) => ({
        id: o.id,
        name: o.name,
        monthlyAllowancePence: o.monthlyAllowancePence,
        jurisdictions: listEnabledJurisdictions(d.db, o.id).map((j) => j.slug),
      }));
      const text = organisations.map((o) => `${o.id}  ${o.name}  [${o.jurisdictions.join(",")}]`).join("\n") || "no organisations";
      return { json: { organisations }, text };
    },
  },
  {
    name: "org jurisdictions",
    summary: "Replace the jurisdictions enabled for an organisation",
    usage: "regkb org jurisdictions --org ID --set eu,us-ny",
    flags: { org: "string", set: "string" },
    async run({ flags, deps }) {
      const d = await deps();
      const orgId = requiredString(flags, "org");
      requireOrganisation(d, orgId);
      const jurisdictions = setOrganisationJurisdictions(d, orgId, slugList(requiredString(flags, "set")) ?? []);
      return { json: { id: orgId, jurisdictions }, text: `organisation ${orgId} jurisdictions: ${jurisdictions.join(", ")}` };
    },
  },
];
