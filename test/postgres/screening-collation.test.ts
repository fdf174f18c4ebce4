// A screening's jurisdictions (the organisation's enabled set, stored with the run) resolved
// on a PostgreSQL database whose default collation ignores punctuation at first (ICU en-US
// with alternate=shifted): byte order, as on SQLite, not the collation's order.
import { expect, test } from "bun:test";
import * as store from "../../src/auth/store";
import { immediate } from "../../src/db/transaction";
import { resolveJurisdictions } from "../../src/search/service";
import { useCollatedHandle, usePostgres } from "../helpers/postgres";

const handle = useCollatedHandle(usePostgres(), "en-US-u-ka-shifted");

test("an organisation's enabled jurisdictions resolve in byte order whatever the database's collation", () => {
  const db = handle();
  // The collation puts "ab" before "a-c"; byte order puts "a-c" first.
  expect(db.query<{ hyphenLast: number }, []>(`SELECT 'ab' < 'a-c' AS "hyphenLast"`).get()).toEqual({ hyphenLast: 1 });
  for (const slug of ["ab", "a-c"]) store.upsertJurisdiction(db, { slug, name: slug, description: slug });
  store.insertOrganisation(db, { id: "org", name: "org", monthlyAllowancePence: 0, createdAtMs: 1 });
  immediate(db, () => store.replaceOrganisationJurisdictions(db, "org", ["ab", "a-c"]));
  expect(resolveJurisdictions({ db }, "org")).toEqual(["a-c", "ab"]);
});
