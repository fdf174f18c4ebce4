// A serving node's replica (src/search/replica/node.ts) on a real PostgreSQL: caught up before
// serving, then following; how stale it says it may be (what every search's
// regkb-index-behind-ms header carries) is 0 when nothing is pending and grows from the
// moment another node commits a change until this node has applied it; catch-ups asked for
// at once take turns, so every change is applied once and the position only moves forward.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { openDatabase } from "../../src/db/open";
import { migratePostgres } from "../../src/db/postgres/migrate";
import { createLogger } from "../../src/log";
import { countChunks } from "../../src/search/chunk-store";
import { REPLICA_APPLIED_SEQ } from "../../src/search/replica/follower";
import { ReplicaNode } from "../../src/search/replica/node";
import { readMetaValue } from "../../src/search/meta-store";
import type { SearchIndex } from "../../src/search/search-index";
import { usePostgres } from "../helpers/postgres";
import { readySearchIndex } from "../helpers/search-index";
import { tempDir } from "../helpers/server";

const pg = usePostgres();
const dataDir = tempDir("regkb-replica-node-");
let db: Database;
let index: SearchIndex;
let nowMs = 1_000_000;
let replica: ReplicaNode;
/** While set, the follower's after-changes step waits for it: a pass that changed the index is not over yet. */
let holdAfterChanges: Promise<void> | undefined;

beforeAll(async () => {
  await migratePostgres(pg.sql);
  db = await openDatabase(dataDir);
  index = await readySearchIndex(db);
  await pg.sql`INSERT INTO search_index_meta (key, value) VALUES ('embedder_id', ${index.embedder.id}), ('dimensions', ${String(index.embedder.dimensions)})`;
  await pg.sql`INSERT INTO jurisdictions (slug, name, description) VALUES ('eu', 'European Union', 'EU law')`;
  await addPassages(0, 20);
  replica = new ReplicaNode({
    sql: pg.connect(pg.url, 2),
    index,
    log: createLogger("silent"),
    pollMs: 60_000,
    batchChangesMax: 7,
    afterChanges: () => holdAfterChanges ?? Promise.resolve(),
    nowMs: () => nowMs,
  });
});

afterAll(async () => {
  await replica.stop();
  db.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Passages `from`..`to`-1 of one shared document, each with a vector of the index's embedder (as another node would write them). */
async function addPassages(from: number, to: number): Promise<void> {
  const texts = Array.from({ length: to - from }, (_, i) => `Article ${from + i}: the controller shall notify breach number ${from + i}`);
  const vectors = await index.embedder.embed(texts);
  await pg.sql.begin(async (tx) => {
    for (const [i, text] of texts.entries()) {
      const [{ id }] = await tx`INSERT INTO search_chunks (document_id, position, source, citation_path, content, jurisdiction_slugs, content_hash)
        VALUES ('corpus:test', ${from + i}, 'Test Act', ${`Article ${from + i}`}, ${text}, '["eu"]', ${`hash-${from + i}`}) RETURNING id`;
      const vector = vectors[i]!;
      await tx`INSERT INTO search_chunk_vectors (chunk_id, embedding) VALUES (${id}, ${new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength)})`;
    }
  });
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

test("caught up before serving, in batches; nothing pending means 0 behind", async () => {
  const report = await replica.catchUpBeforeServing();
  // One change per passage (a passage's later change replaces its earlier one: migration 014), 7 per batch.
  expect(report.changes).toBe(20);
  expect(report.batches).toBe(3);
  expect(countChunks(db)).toBe(20);
  expect(replica.behindMs()).toBe(0);
});

test("following: a change committed elsewhere is behind from its notification until this node has applied it, then 0 again", async () => {
  replica.start();
  let release = () => {};
  holdAfterChanges = new Promise((resolve) => (release = resolve));
  await addPassages(20, 21);
  await until(() => countChunks(db) === 21, "the first new passage to be applied");
  // That pass is not over (held), so the next change waits: notified, not applied.
  await addPassages(21, 22);
  await until(() => {
    nowMs += 1;
    return replica.behindMs() > 0;
  }, "the notification of the second change");
  const notifiedBehindMs = replica.behindMs();
  nowMs += 1_500;
  expect(replica.behindMs()).toBe(notifiedBehindMs + 1_500);
  expect(countChunks(db)).toBe(21);
  holdAfterChanges = undefined;
  release();
  await until(() => countChunks(db) === 22 && replica.behindMs() === 0, "the second change to be applied");
});

test("catch-ups asked for at once take turns: every change applied once, the position never moves back", async () => {
  await replica.stop();
  await addPassages(22, 42);
  const sql = pg.connect(pg.url, 1);
  const [{ newest }] = await sql`SELECT max(seq)::int AS newest FROM passage_changes`;
  const positions: number[] = [];
  const watch = setInterval(() => positions.push(Number(readMetaValue(db, REPLICA_APPLIED_SEQ))), 1);
  const reports = await Promise.all([replica.catchUp(), replica.catchUp(), replica.catchUp()]);
  clearInterval(watch);
  // The first reads and applies all 20 changes; the others, after it, find nothing left.
  expect(reports.map((r) => r.changes).sort((a, b) => b - a)).toEqual([20, 0, 0]);
  positions.push(Number(readMetaValue(db, REPLICA_APPLIED_SEQ)));
  expect(countChunks(db)).toBe(42);
  expect(positions.at(-1)).toBe(newest);
  expect(positions).toEqual([...positions].sort((a, b) => a - b));
  expect(replica.behindMs()).toBe(0);
});
