// The one switch for storage tests that must hold on both engines: forEachEngine() defines
// the same tests twice, once over a real SQLite data directory (the migrations `regkb serve`
// applies) and once over a fresh PostgreSQL database migrated by `regkb migrate`'s code and
// reached through the synchronous handle (src/db/postgres/sync/), which the stores use as
// they use bun:sqlite.
import { afterAll, beforeAll, describe } from "bun:test";
import { rmSync } from "node:fs";
import { openDatabase } from "../../src/db/open";
import { migratePostgres } from "../../src/db/postgres/migrate";
import { openPostgresHandle } from "../../src/db/postgres/sync/handle";
import type { SqlDatabase } from "../../src/db/sql-database";
import { uuidv7 } from "../../src/ids";
import { usePostgres } from "./postgres";
import { tempDir } from "./server";

export type EngineName = "sqlite" | "postgres";

export interface TestEngine {
  readonly name: EngineName;
  readonly db: SqlDatabase;
  /** PostgreSQL only: the database's URL, for other processes (holds the password: never print it). */
  readonly url: string | undefined;
  /** A new organisation (its credit balance opened by the schema's trigger); returns its id. */
  createOrganisation(name: string, monthlyAllowancePence?: number): string;
}

export const ENGINES: readonly EngineName[] = ["sqlite", "postgres"];

/** An engine of this name for the enclosing describe block: opened before its tests, closed and removed after. */
export function useEngine(name: EngineName): () => TestEngine {
  let engine: TestEngine | undefined;
  let cleanup = () => {};
  const postgres = name === "postgres" ? usePostgres() : undefined;
  beforeAll(async () => {
    let db: SqlDatabase;
    let url: string | undefined;
    if (postgres) {
      await migratePostgres(postgres.sql);
      url = postgres.url;
      db = openPostgresHandle({ url });
      cleanup = () => db.close();
    } else {
      const dataDir = tempDir("regkb-engine-");
      db = await openDatabase(dataDir);
      cleanup = () => {
        db.close();
        rmSync(dataDir, { recursive: true, force: true });
      };
    }
    engine = {
      name,
      db,
      url,
      createOrganisation: (orgName, monthlyAllowancePence = 0) => {
        const id = uuidv7();
        db.query("INSERT INTO organisations (id, name, monthly_allowance_pence, created_at_ms) VALUES (?, ?, ?, ?)").run(
          id,
          orgName,
          monthlyAllowancePence,
          Date.now(),
        );
        return id;
      },
    };
  });
  // Should the database be dropped first, its DROP … WITH (FORCE) ends the handle's connection anyway.
  afterAll(() => cleanup());
  return () => {
    if (!engine) throw new Error("useEngine: the engine exists only once beforeAll has run");
    return engine;
  };
}

/** Defines `body`'s tests once per engine, each in a describe block named after it. */
export function forEachEngine(body: (engine: () => TestEngine, name: EngineName) => void): void {
  for (const name of ENGINES) describe(name, () => body(useEngine(name), name));
}
