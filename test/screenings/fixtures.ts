import { getBalance, topUp } from "../../src/billing/ledger";
import { ledgerKeys } from "../../src/billing/ledger-keys";
import { listEntries } from "../../src/billing/store";
import type { Deps } from "../../src/deps";
import { uuidv7 } from "../../src/ids";
import { indexDocument } from "../../src/search/indexing";
import type { TestServer } from "../helpers/server";

/** A few shared-corpus passages, one per jurisdiction, with words a keyword can pin down. */
export async function seedCorpus(deps: Deps): Promise<void> {
  const passages: [string, string, string][] = [
    ["eu", "GDPR Article 33", "The controller shall notify the supervisory authority of a personal data breach within 72 hours."],
    ["us", "FTC Act Section 5", "Unfair or deceptive acts or practices in or affecting commerce are declared unlawful."],
    ["us-ny", "NY GBL 899-aa", "Any business which owns computerized data shall disclose a breach of the security of the system."],
    ["us-ca", "CCPA 1798.100", "A consumer shall have the right to request that a business disclose the zebrafinch categories collected."],
  ];
  for (const [slug, source, text] of passages) {
    await indexDocument(deps, {
      documentId: `test-corpus-${slug}`,
      ownerOrgId: null,
      jurisdictions: [slug],
      passages: [{ source, citationPath: source, text, position: 0 }],
    });
  }
}

export function credit(deps: Deps, orgId: string, amountPence: number): void {
  topUp(deps.db, { orgId, amountPence, key: ledgerKeys.operatorTopUp(orgId), description: "test credit", nowMs: deps.clock.nowMs() });
}

export function balance(deps: Deps, orgId: string) {
  return getBalance(deps.db, orgId);
}

/** The ledger entries that belong to one run, oldest first. */
export function runEntries(deps: Deps, orgId: string, runId: string) {
  return listEntries(deps.db, orgId, 200, 0)
    .filter((e) => e.ref === runId)
    .reverse()
    .map((e) => ({ type: e.type, amountPence: e.amountPence, key: e.key }));
}

export async function waitForStatus(server: TestServer, key: string, id: string, statuses: string[], timeoutMs = 10_000) {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const res = await server.api(`/v1/screenings/${id}`, { key });
    if (statuses.includes(res.body.status)) return res;
    if (performance.now() > deadline) throw new Error(`screening ${id} still ${res.body.status} after ${timeoutMs} ms`);
    await Bun.sleep(5);
  }
}
