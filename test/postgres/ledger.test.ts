// The ledger's guarantees in PostgreSQL's own SQL, whatever code writes: entries are
// append-only, credit_balances follows every entry in the same transaction, the CHECKs
// refuse overdraw and negative holds, idempotency keys are unique, and 32 connections
// spending one organisation's credit at once end at exactly zero.
import { beforeAll, describe, expect, test } from "bun:test";
import type { SQL } from "bun";
import { migratePostgres } from "../../src/db/postgres/migrate";
import { usePostgres } from "../helpers/postgres";

const pg = usePostgres();

beforeAll(async () => {
  await migratePostgres(pg.sql);
});

type EntryType = "top_up" | "grant" | "reserve" | "settle" | "release" | "adjustment";
const PURPOSE: Record<EntryType, string> = {
  top_up: "operator_top_up", grant: "monthly_grant", reserve: "run_hold", settle: "search", release: "run_release", adjustment: "operator_adjustment",
};

async function newOrganisation(sql: SQL = pg.sql): Promise<string> {
  const id = `org_${crypto.randomUUID()}`;
  await sql`INSERT INTO organisations (id, name, created_at_ms) VALUES (${id}, 'Acme Bank', ${Date.now()})`;
  return id;
}

function entry(sql: SQL, orgId: string, type: EntryType, amountPence: number, key = `${type}:${crypto.randomUUID()}`) {
  return sql`INSERT INTO ledger_entries (id, org_id, type, amount_pence, currency, description, idempotency_key, purpose, created_at_ms)
    VALUES (${crypto.randomUUID()}, ${orgId}, ${type}, ${amountPence}, 'GBP', 'test movement', ${key}, ${PURPOSE[type]}, ${Date.now()})`;
}

async function balance(orgId: string, sql: SQL = pg.sql) {
  const [row] = await sql`SELECT balance_pence::int AS "balancePence", held_pence::int AS "heldPence" FROM credit_balances WHERE org_id = ${orgId}`;
  return row as { balancePence: number; heldPence: number };
}

/** The server's SQLSTATE and message of a refused statement. */
async function refusal(statement: Promise<unknown>): Promise<{ state: string | undefined; message: string }> {
  try {
    await statement;
  } catch (error) {
    return { state: (error as { errno?: string }).errno, message: (error as Error).message };
  }
  throw new Error("the statement was accepted");
}

describe("append-only", () => {
  test("UPDATE, DELETE and TRUNCATE of ledger entries are refused, and the entry stays as written", async () => {
    const org = await newOrganisation();
    await entry(pg.sql, org, "top_up", 500, "topup:operator:append-only");
    const message = "ledger entries are append-only: write an adjustment instead";
    expect(await refusal(pg.sql`UPDATE ledger_entries SET amount_pence = 5000 WHERE org_id = ${org}`)).toEqual({ state: "P0001", message });
    expect(await refusal(pg.sql`DELETE FROM ledger_entries WHERE org_id = ${org}`)).toEqual({ state: "P0001", message });
    expect(await refusal(pg.sql`TRUNCATE ledger_entries CASCADE`)).toEqual({ state: "P0001", message });
    const rows = await pg.sql`SELECT amount_pence::int AS amount FROM ledger_entries WHERE org_id = ${org}`;
    expect(rows.map((r: { amount: number }) => r.amount)).toEqual([500]);
    expect(await balance(org)).toEqual({ balancePence: 500, heldPence: 0 });
  });

  test("an entry without a purpose, or with a purpose of another type, is refused", async () => {
    const org = await newOrganisation();
    const noPurpose = pg.sql`INSERT INTO ledger_entries (id, org_id, type, amount_pence, currency, description, idempotency_key, created_at_ms)
      VALUES (${crypto.randomUUID()}, ${org}, 'top_up', 100, 'GBP', 'x', ${`k:${crypto.randomUUID()}`}, 0)`;
    expect(await refusal(noPurpose)).toEqual({ state: "P0001", message: "a ledger entry needs a purpose (src/billing/ledger-keys.ts)" });
    const wrongPurpose = pg.sql`INSERT INTO ledger_entries (id, org_id, type, amount_pence, currency, description, idempotency_key, purpose, created_at_ms)
      VALUES (${crypto.randomUUID()}, ${org}, 'top_up', 100, 'GBP', 'x', ${`k:${crypto.randomUUID()}`}, 'search', 0)`;
    expect((await refusal(wrongPurpose)).state).toBe("23514");
  });
});

describe("balances", () => {
  test("credit_balances follows each entry: balance = Σ top_up, grant, settle, adjustment; held = −Σ reserve, release", async () => {
    const org = await newOrganisation();
    expect(await balance(org)).toEqual({ balancePence: 0, heldPence: 0 });
    const steps: [EntryType, number, { balancePence: number; heldPence: number }][] = [
      ["top_up", 1000, { balancePence: 1000, heldPence: 0 }],
      ["grant", 200, { balancePence: 1200, heldPence: 0 }],
      ["reserve", -65, { balancePence: 1200, heldPence: 65 }],
      ["settle", -12, { balancePence: 1188, heldPence: 65 }],
      ["release", 65, { balancePence: 1188, heldPence: 0 }],
      ["settle", -2, { balancePence: 1186, heldPence: 0 }],
      ["adjustment", 2, { balancePence: 1188, heldPence: 0 }],
      ["adjustment", -88, { balancePence: 1100, heldPence: 0 }],
    ];
    for (const [type, amount, expected] of steps) {
      await entry(pg.sql, org, type, amount);
      expect(await balance(org), `${type} ${amount}`).toEqual(expected);
    }
    const [sums] = await pg.sql`SELECT sum(amount_pence)::int AS available FROM ledger_entries WHERE org_id = ${org}`;
    expect(sums.available).toBe(1100);
  });

  test("a reserve beyond available credit is refused by the CHECK, and nothing of it is written", async () => {
    const org = await newOrganisation();
    await entry(pg.sql, org, "top_up", 100);
    await entry(pg.sql, org, "reserve", -60);
    const refused = await refusal(entry(pg.sql, org, "reserve", -41));
    expect(refused.state).toBe("23514");
    expect(refused.message).toContain("credit_balances_available_not_negative");
    expect(await balance(org)).toEqual({ balancePence: 100, heldPence: 60 });
    const [{ n }] = await pg.sql`SELECT count(*)::int AS n FROM ledger_entries WHERE org_id = ${org}`;
    expect(n).toBe(2);
    await entry(pg.sql, org, "reserve", -40);
    expect(await balance(org)).toEqual({ balancePence: 100, heldPence: 100 });
  });

  test("releasing more than is held is refused (held ≥ 0), and so are amounts of the wrong sign", async () => {
    const org = await newOrganisation();
    await entry(pg.sql, org, "top_up", 100);
    await entry(pg.sql, org, "reserve", -10);
    expect((await refusal(entry(pg.sql, org, "release", 11))).message).toContain("credit_balances_held_pence_check");
    expect((await refusal(entry(pg.sql, org, "settle", 5))).message).toContain("ledger_entries_amount_sign");
    expect((await refusal(entry(pg.sql, org, "top_up", 0))).message).toContain("ledger_entries_amount_sign");
    expect((await refusal(entry(pg.sql, org, "adjustment", 1_000_000_001))).message).toContain("ledger_entries_amount_sign");
    expect(await balance(org)).toEqual({ balancePence: 100, heldPence: 10 });
  });
});

describe("idempotency", () => {
  test("a ledger idempotency key is written once: the replay is refused and moves no money", async () => {
    const org = await newOrganisation();
    await entry(pg.sql, org, "top_up", 300, "topup:order-1");
    expect((await refusal(entry(pg.sql, org, "top_up", 300, "topup:order-1"))).state).toBe("23505");
    expect(await balance(org)).toEqual({ balancePence: 300, heldPence: 0 });
  });

  test("an Idempotency-Key is unique per organisation, and the same key is free in another organisation", async () => {
    const [a, b] = [await newOrganisation(), await newOrganisation()];
    const claim = (org: string) =>
      pg.sql`INSERT INTO idempotency_keys (org_id, key, request_hash, operation_id, locked_until_ms, created_at_ms, expires_at_ms)
        VALUES (${org}, 'retry-me', 'hash', ${crypto.randomUUID()}, 0, 0, 86400000)`;
    await claim(a);
    expect((await refusal(claim(a))).state).toBe("23505");
    await claim(b);
    const [{ n }] = await pg.sql`SELECT count(*)::int AS n FROM idempotency_keys WHERE key = 'retry-me'`;
    expect(n).toBe(2);
  });
});

describe("32 connections spending one organisation's 100p at once", () => {
  const CLIENTS = 32;

  test("each locks the balance row (FOR UPDATE), checks, settles 1p: exactly 100 accepted, available 0", async () => {
    const org = await newOrganisation();
    await entry(pg.sql, org, "top_up", 100);
    const pool = pg.connect(pg.url, CLIENTS);
    // Every client's first transaction is open on its own connection before any takes the
    // row lock, so all 32 really contend for it.
    const backends = new Set<number>();
    let allOpen!: () => void;
    const barrier = new Promise<void>((resolve) => (allOpen = resolve));
    const spend = () =>
      pool.begin(async (tx) => {
        const [{ pid }] = await tx`SELECT pg_backend_pid() AS pid`;
        if (!backends.has(pid)) {
          backends.add(pid);
          if (backends.size === CLIENTS) allOpen();
        }
        await barrier;
        const [row] = await tx`SELECT balance_pence - held_pence AS available FROM credit_balances WHERE org_id = ${org} FOR UPDATE`;
        if (Number(row.available) < 1) return false;
        await entry(tx, org, "settle", -1);
        return true;
      });
    const client = async () => {
      let accepted = 0;
      while (await spend()) accepted++;
      return accepted;
    };
    const accepted = await Promise.all(Array.from({ length: CLIENTS }, client));
    expect(accepted.reduce((a, b) => a + b, 0)).toBe(100);
    expect(backends.size).toBe(CLIENTS);
    expect(await balance(org)).toEqual({ balancePence: 0, heldPence: 0 });
    const [{ n, total }] = await pg.sql`SELECT count(*)::int AS n, sum(amount_pence)::int AS total FROM ledger_entries WHERE org_id = ${org} AND type = 'settle'`;
    expect({ n, total }).toEqual({ n: 100, total: -100 });
  });

  test("without any lock or check in the caller, the CHECK alone accepts exactly 100 and refuses the rest", async () => {
    const org = await newOrganisation();
    await entry(pg.sql, org, "top_up", 100);
    const pool = pg.connect(pg.url, CLIENTS);
    const ATTEMPTS = 5;
    const client = async () => {
      const outcomes: string[] = [];
      for (let i = 0; i < ATTEMPTS; i++) {
        outcomes.push(await entry(pool, org, "settle", -1).then(() => "accepted", (e: { errno?: string }) => e.errno ?? "other"));
      }
      return outcomes;
    };
    const outcomes = (await Promise.all(Array.from({ length: CLIENTS }, client))).flat();
    expect(outcomes.filter((o) => o === "accepted").length).toBe(100);
    expect(outcomes.filter((o) => o === "23514").length).toBe(CLIENTS * ATTEMPTS - 100);
    expect(await balance(org)).toEqual({ balancePence: 0, heldPence: 0 });
  });
});

describe("the order entries were written in (seq, migration 014)", () => {
  /** Resolves once some backend waits for a lock, i.e. `statement` has queued behind one. */
  async function untilSomeoneWaits(): Promise<void> {
    for (;;) {
      const [{ waiting }] = await pg.sql`SELECT count(*)::int AS waiting FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock'`;
      if (waiting > 0) return;
      await Bun.sleep(5);
    }
  }

  test("an organisation's entries are numbered in commit order, even when a writer took no lock of its own", async () => {
    const org = await newOrganisation();
    const [first, second] = [pg.connect(pg.url, 1), pg.connect(pg.url, 1)];
    let commitTopUp!: () => void;
    const topUpMayCommit = new Promise<void>((resolve) => (commitTopUp = resolve));
    // The top-up's writer locks the balance row, then pauses; the settle (no lock of its own)
    // is inserted meanwhile and must wait; then the top-up is written and commits first.
    const topUp = first.begin(async (tx) => {
      await tx`SELECT 1 FROM credit_balances WHERE org_id = ${org} FOR UPDATE`;
      await topUpMayCommit;
      await entry(tx, org, "top_up", 100, `top_up:${org}`);
    });
    await Bun.sleep(20);
    const settle = (async () => await entry(second, org, "settle", -100, `settle:${org}`))(); // a query runs once awaited
    await untilSomeoneWaits();
    commitTopUp();
    await Promise.all([topUp, settle]);
    const rows: { key: string }[] = await pg.sql`SELECT idempotency_key AS key FROM ledger_entries WHERE org_id = ${org} ORDER BY seq`;
    // Replayed in seq order (as `regkb backup` does) the settle never meets an empty balance.
    expect(rows.map((r) => r.key)).toEqual([`top_up:${org}`, `settle:${org}`]);
    expect(await balance(org)).toEqual({ balancePence: 0, heldPence: 0 });
  });

  test("a seq given by the writer is replaced by the next number", async () => {
    const org = await newOrganisation();
    await pg.sql`INSERT INTO ledger_entries (id, org_id, type, amount_pence, currency, description, idempotency_key, purpose, created_at_ms, seq)
      VALUES (${crypto.randomUUID()}, ${org}, 'top_up', 5, 'GBP', 'test movement', ${`top_up:${org}`}, 'operator_top_up', ${Date.now()}, 1)`;
    const [{ seq, newest }] = await pg.sql`SELECT seq::int AS seq, (SELECT max(seq) FROM ledger_entries)::int AS newest
      FROM ledger_entries WHERE org_id = ${org}`;
    expect(seq).toBe(newest);
    expect(seq).toBeGreaterThan(1);
  });
});
