// The ledger on a PostgreSQL database whose default collation is not byte order (ICU en-US,
// as many customers' databases are): keys must be found by exact value, never by a range
// whose meaning depends on how the collation sorts ':' and ';'.
import { expect, test } from "bun:test";
import { chargeRefundable, getBalance, refundCharge, topUp } from "../../src/billing/ledger";
import { ledgerKeys } from "../../src/billing/ledger-keys";
import { uuidv7 } from "../../src/ids";
import { useCollatedHandle, usePostgres } from "../helpers/postgres";

const handle = useCollatedHandle(usePostgres(), "en-US");

test("a search refunded twice is charged a third time under its own key, not answered with a refunded charge", () => {
  const db = handle();
  // ICU sorts ';' before ':', so the range (key + ':', key + ';') holds nothing here.
  expect(db.query<{ semicolonFirst: number }, []>(`SELECT ';' < ':' AS "semicolonFirst"`).get()).toEqual({ semicolonFirst: 1 });
  const orgId = uuidv7();
  db.query("INSERT INTO organisations (id, name, monthly_allowance_pence, created_at_ms) VALUES (?, 'ICU', 0, ?)").run(orgId, Date.now());
  topUp(db, { orgId, amountPence: 100, key: ledgerKeys.operatorTopUp(orgId, "icu"), description: "credit", nowMs: Date.now() });
  const key = ledgerKeys.search(`op-${orgId}`);
  const keys: string[] = [];
  for (let attempt = 0; attempt < 3; attempt++) {
    const charged = chargeRefundable(db, { orgId, amountPence: 2, key, description: "search", nowMs: Date.now() });
    keys.push(charged.key.key);
    if (attempt < 2) refundCharge(db, { charge: charged, description: "search failed", nowMs: Date.now() });
  }
  expect(keys).toEqual([key.key, `${key.key}:retry-1`, `${key.key}:retry-2`]);
  expect(getBalance(db, orgId).availablePence).toBe(98);
});
