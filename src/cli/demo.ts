import { createApiKey, createOrganisation, setOrganisationJurisdictions } from "../auth/service";
import { listApiKeys, listJurisdictions, listOrganisations, revokeApiKey } from "../auth/store";
import { getBalance } from "../billing/ledger";
import { recordOperatorTopUp } from "../billing/operator";
import type { Deps } from "../deps";

const DEMO_NAME = "Demo organisation";
const DEMO_KEY_NAME = "demo";
/** Credit the demo organisation starts with: enough for hundreds of searches. */
const DEMO_CREDIT_PENCE = 1000;

/**
 * First start: a demo organisation with every jurisdiction enabled and some credit.
 * Every start: a fresh demo key (older demo keys revoked), since keys are shown once.
 */
export async function ensureDemo(deps: Deps): Promise<{ orgId: string; key: string; availablePence: number }> {
  const existing = listOrganisations(deps.db, 10_000).find((o) => o.name === DEMO_NAME);
  const slugs = listJurisdictions(deps.db).map((j) => j.slug);
  const orgId = existing?.id ?? createOrganisation(deps, { name: DEMO_NAME, jurisdictions: slugs }).id;
  // Idempotent by its reference: credited on the first start only, whatever happens in between.
  recordOperatorTopUp(deps, { orgId, amountPence: DEMO_CREDIT_PENCE, reference: "demo-initial-credit" });
  if (existing) setOrganisationJurisdictions(deps, orgId, slugs);
  for (const key of listApiKeys(deps.db, orgId)) {
    if (key.name === DEMO_KEY_NAME && key.revokedAtMs === null) revokeApiKey(deps.db, key.id, deps.clock.nowMs());
  }
  const { key } = createApiKey(deps, { orgId, name: DEMO_KEY_NAME });
  return { orgId, key, availablePence: getBalance(deps.db, orgId).availablePence };
}
