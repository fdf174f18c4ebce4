// Organisations, jurisdictions and keys listed from a PostgreSQL database whose default
// collation ignores punctuation at first (ICU en-US with alternate=shifted, as glibc's en_US
// does): the lists come back in byte order, as on SQLite, not in the collation's order.
import { expect, test } from "bun:test";
import * as store from "../../src/auth/store";
import { useCollatedHandle, usePostgres } from "../helpers/postgres";

const handle = useCollatedHandle(usePostgres(), "en-US-u-ka-shifted");

test("jurisdictions, organisations and keys list in byte order whatever the database's collation", () => {
  const db = handle();
  // The collation puts "ab" before "a-c"; byte order puts "a-c" first.
  expect(db.query<{ hyphenLast: number }, []>(`SELECT 'ab' < 'a-c' AS "hyphenLast"`).get()).toEqual({ hyphenLast: 1 });
  for (const slug of ["ab", "a-c"]) store.upsertJurisdiction(db, { slug, name: slug, description: slug });
  expect(store.listJurisdictions(db).map((j) => j.slug)).toEqual(["a-c", "ab"]);
  for (const id of ["org-ab", "org-a-c"]) store.insertOrganisation(db, { id, name: id, monthlyAllowancePence: 0, createdAtMs: 1 });
  expect(store.listOrganisations(db, 10).map((o) => o.id)).toEqual(["org-a-c", "org-ab"]);
  store.replaceOrganisationJurisdictions(db, "org-ab", ["ab", "a-c"]);
  expect(store.listEnabledJurisdictions(db, "org-ab").map((j) => j.slug)).toEqual(["a-c", "ab"]);
  for (const id of ["key-ab", "key-a-c"]) {
    store.insertApiKey(db, { id, orgId: "org-ab", name: id, keyHash: id, displayPrefix: id, createdAtMs: 1, lastUsedAtMs: null, revokedAtMs: null });
  }
  expect(store.listApiKeys(db, "org-ab").map((k) => k.id)).toEqual(["key-ab", "key-a-c"]);
});
