// Organisations, jurisdictions and API keys (src/auth/store.ts and service.ts) on SQLite and on
// PostgreSQL through the synchronous handle (test/helpers/engines.ts): the same calls, the same answers.
import { beforeAll, expect, test } from "bun:test";
import { hashApiKey } from "../../src/auth/keys";
import {
  authenticateApiKey,
  createApiKey,
  createOrganisation,
  revokeApiKey,
  setOrganisationJurisdictions,
  type AuthDeps,
} from "../../src/auth/service";
import * as store from "../../src/auth/store";
import { forEachEngine, type TestEngine } from "../helpers/engines";
import { refusalOf } from "../helpers/refusal";

const MINUTE_MS = 60_000;

forEachEngine((current) => {
  let engine: TestEngine;
  let nowMs = 1_700_000_000_000;
  let deps: AuthDeps;
  beforeAll(() => {
    engine = current();
    deps = { db: engine.db, clock: { nowMs: () => nowMs } };
    store.upsertJurisdiction(engine.db, { slug: "uk-fca", name: "FCA", description: "UK financial conduct" });
    store.upsertJurisdiction(engine.db, { slug: "eu-eba", name: "EBA", description: "EU banking" });
  });

  test("an organisation is created with its jurisdictions and found again, every field as written", () => {
    const org = createOrganisation(deps, { name: "  Acme Bank  ", jurisdictions: ["uk-fca", "eu-eba", "uk-fca"], monthlyAllowancePence: 2_500 });
    expect(org).toEqual({ id: org.id, name: "Acme Bank", monthlyAllowancePence: 2_500, createdAtMs: nowMs, jurisdictions: ["uk-fca", "eu-eba"] });
    expect(store.findOrganisation(engine.db, org.id)).toEqual({ id: org.id, name: "Acme Bank", monthlyAllowancePence: 2_500, createdAtMs: nowMs });
    expect(store.listEnabledJurisdictions(engine.db, org.id).map((j) => j.slug)).toEqual(["eu-eba", "uk-fca"]);
    expect(store.findOrganisation(engine.db, "no-such-org")).toBeNull();
    expect(store.listOrganisations(engine.db, 10_000).map((o) => o.id)).toContain(org.id);
  });

  test("organisations list oldest first with ties broken by id, up to the limit", async () => {
    const firstMs = nowMs + 1_000;
    for (const n of [3, 2, 1]) {
      store.insertOrganisation(engine.db, { id: `list-order-${n}`, name: `Org ${n}`, monthlyAllowancePence: 0, createdAtMs: n === 3 ? firstMs : firstMs + 1 });
    }
    const listed = store.listOrganisations(engine.db, 10_000).map((o) => o.id).filter((id) => id.startsWith("list-order-"));
    expect(listed).toEqual(["list-order-3", "list-order-1", "list-order-2"]);
    expect(store.listOrganisations(engine.db, 1)).toHaveLength(1);
    store.setMonthlyAllowance(engine.db, "list-order-1", 900);
    expect(store.findOrganisation(engine.db, "list-order-1")?.monthlyAllowancePence).toBe(900);
  });

  test("unknown jurisdictions are refused and nothing is written", async () => {
    const before = store.listOrganisations(engine.db, 10_000).length;
    expect(await refusalOf(() => createOrganisation(deps, { name: "Bad", jurisdictions: ["uk-fca", "mars"] }))).toEqual({
      status: 400,
      code: "invalid_jurisdictions",
    });
    expect(store.listOrganisations(engine.db, 10_000)).toHaveLength(before);
    expect(store.findUnknownJurisdictions(engine.db, ["eu-eba", "mars", "venus"])).toEqual(["mars", "venus"]);
  });

  test("jurisdictions are replaced as a whole, sorted; an unknown organisation is 404", async () => {
    const org = createOrganisation(deps, { name: "Switcher", jurisdictions: ["uk-fca"] });
    expect(setOrganisationJurisdictions(deps, org.id, ["uk-fca", "eu-eba"])).toEqual(["eu-eba", "uk-fca"]);
    expect(store.listEnabledJurisdictions(engine.db, org.id)).toEqual([
      { slug: "eu-eba", name: "EBA", description: "EU banking" },
      { slug: "uk-fca", name: "FCA", description: "UK financial conduct" },
    ]);
    expect(setOrganisationJurisdictions(deps, org.id, [])).toEqual([]);
    expect(store.listEnabledJurisdictions(engine.db, org.id)).toEqual([]);
    expect(await refusalOf(() => setOrganisationJurisdictions(deps, "no-such-org", ["uk-fca"]))).toEqual({ status: 404, code: "not_found" });
    // A failed replacement leaves the previous set as it was.
    setOrganisationJurisdictions(deps, org.id, ["uk-fca"]);
    expect((await refusalOf(() => setOrganisationJurisdictions(deps, org.id, ["eu-eba", "mars"]))).code).toBe("invalid_jurisdictions");
    expect(store.listEnabledJurisdictions(engine.db, org.id).map((j) => j.slug)).toEqual(["uk-fca"]);
  });

  test("upserting a jurisdiction updates its name and description", () => {
    store.upsertJurisdiction(engine.db, { slug: "xx-tmp", name: "Old", description: "old" });
    store.upsertJurisdiction(engine.db, { slug: "xx-tmp", name: "New", description: "new" });
    expect(store.listJurisdictions(engine.db).find((j) => j.slug === "xx-tmp")).toEqual({ slug: "xx-tmp", name: "New", description: "new" });
  });

  test("keys: created, found by hash and id, listed newest first, every field as written", async () => {
    const org = createOrganisation(deps, { name: "Keyholder" });
    const first = createApiKey(deps, { orgId: org.id, name: "ci" });
    nowMs += 1;
    const second = createApiKey(deps, { orgId: org.id });
    const row = store.findApiKeyByHash(engine.db, hashApiKey(first.key));
    expect(row).toEqual({
      id: first.id,
      orgId: org.id,
      name: "ci",
      keyHash: hashApiKey(first.key),
      displayPrefix: `${first.key.slice(0, 12)}…`,
      createdAtMs: nowMs - 1,
      lastUsedAtMs: null,
      revokedAtMs: null,
    });
    expect(store.findApiKey(engine.db, first.id)).toEqual(row);
    expect(store.findApiKeyByHash(engine.db, hashApiKey("rk_live_" + "0".repeat(40)))).toBeNull();
    expect(store.listApiKeys(engine.db, org.id).map((k) => [k.id, k.name])).toEqual([
      [second.id, "default"],
      [first.id, "ci"],
    ]);
    expect(await refusalOf(() => createApiKey(deps, { orgId: "no-such-org" }))).toEqual({ status: 404, code: "not_found" });
  });

  test("keys created in the same millisecond list by id, newest first", async () => {
    const org = createOrganisation(deps, { name: "Same instant" });
    const ids = Array.from({ length: 3 }, () => createApiKey(deps, { orgId: org.id }).id);
    expect(store.listApiKeys(engine.db, org.id).map((k) => k.id)).toEqual([...ids].sort().reverse());
  });

  test("a key is revoked once, then refused; another organisation cannot revoke it", async () => {
    const org = createOrganisation(deps, { name: "Revoker" });
    const other = createOrganisation(deps, { name: "Other" });
    const key = createApiKey(deps, { orgId: org.id });
    expect(authenticateApiKey(deps, `Bearer ${key.key}`)).toEqual({ orgId: org.id, keyId: key.id });
    expect(await refusalOf(() => revokeApiKey(deps, key.id, other.id))).toEqual({ status: 404, code: "not_found" });
    const revokedAtMs = nowMs;
    revokeApiKey(deps, key.id, org.id);
    expect(store.findApiKey(engine.db, key.id)?.revokedAtMs).toBe(revokedAtMs);
    nowMs += 5;
    expect(store.revokeApiKey(engine.db, key.id, nowMs)).toBe(false);
    expect(store.findApiKey(engine.db, key.id)?.revokedAtMs).toBe(revokedAtMs);
    expect(await refusalOf(() => authenticateApiKey(deps, `Bearer ${key.key}`))).toEqual({ status: 401, code: "unauthorized" });
  });

  test("last used is written on first use and then at most once a minute", () => {
    const org = createOrganisation(deps, { name: "User" });
    const key = createApiKey(deps, { orgId: org.id });
    const startMs = nowMs;
    authenticateApiKey(deps, `bearer  ${key.key}`);
    expect(store.findApiKey(engine.db, key.id)?.lastUsedAtMs).toBe(startMs);
    nowMs = startMs + MINUTE_MS - 1;
    authenticateApiKey(deps, `Bearer ${key.key}`);
    expect(store.findApiKey(engine.db, key.id)?.lastUsedAtMs).toBe(startMs);
    nowMs = startMs + MINUTE_MS;
    authenticateApiKey(deps, `Bearer ${key.key}`);
    expect(store.findApiKey(engine.db, key.id)?.lastUsedAtMs).toBe(startMs + MINUTE_MS);
  });
});
