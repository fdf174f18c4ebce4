// A retried search counts its operation's earlier refunds before charging (ledger.ts
// chargeRefundable): that count must search the key index, not scan the ledger, or every paid
// search slows as the ledger grows.
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { createOrganisation } from "../../src/auth/service";
import { topUp } from "../../src/billing/ledger";
import { ledgerKeys } from "../../src/billing/ledger-keys";
import { COUNT_ENTRIES_UNDER_KEY_SQL, countEntriesUnderKey } from "../../src/billing/store";
import { openDatabase } from "../../src/db/open";
import { tempDir } from "../helpers/server";

const dataDir = tempDir("regkb-ledger-key-lookup-");
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

test("counting an operation's entries searches the key's index and counts exactly `key` and `key:…`", async () => {
  const db = await openDatabase(dataDir, "full", { init: true });
  const plan = db.query<{ detail: string }, [string]>(`EXPLAIN QUERY PLAN ${COUNT_ENTRIES_UNDER_KEY_SQL}`).all("x").map((r) => r.detail);
  expect(plan.filter((d) => d.startsWith("SEARCH ledger_entries"))).toHaveLength(2);
  expect(plan.filter((d) => d.startsWith("SCAN") && d !== "SCAN CONSTANT ROW")).toEqual([]);

  const org = createOrganisation({ db, clock: { nowMs: () => 1 } }, { name: "Counted" });
  const write = (key: string) => topUp(db, { orgId: org.id, amountPence: 1, key: { ...ledgerKeys.operatorTopUp(org.id, "x"), key }, description: "T", nowMs: 1 });
  for (const key of ["op", "op:retry-1", "op:retry-2", "op-other", "op;", "opx", "o", "op:"]) write(key);
  expect(countEntriesUnderKey(db, "op")).toBe(3);
  expect(countEntriesUnderKey(db, "op-other")).toBe(1);
  expect(countEntriesUnderKey(db, "absent")).toBe(0);
  db.close();
});
