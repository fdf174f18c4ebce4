// Passages and their ordered change log in PostgreSQL: every insert, update and delete of a
// passage (or its vector) is logged by trigger, and sequence numbers become visible in
// commit order, so a node can always resume from the highest seq it applied.
import { beforeAll, expect, test } from "bun:test";
import type { SQL } from "bun";
import { migratePostgres } from "../../src/db/postgres/migrate";
import { usePostgres } from "../helpers/postgres";

const pg = usePostgres();

beforeAll(async () => {
  await migratePostgres(pg.sql);
});

function insertPassage(sql: SQL, documentId: string, position: number, jurisdictionSlugs = '["eu"]') {
  return sql`INSERT INTO search_chunks (document_id, position, source, citation_path, content, jurisdiction_slugs, content_hash)
    VALUES (${documentId}, ${position}, 'GDPR', ${`GDPR > Article ${position}`}, 'The controller shall notify.', ${jurisdictionSlugs}, 'hash')
    RETURNING id::int AS id`;
}

async function changesAfter(seq: number): Promise<{ seq: number; op: string; chunkId: number; documentId: string }[]> {
  return pg.sql`SELECT seq::int AS seq, op, chunk_id::int AS "chunkId", document_id AS "documentId"
    FROM passage_changes WHERE seq > ${seq} ORDER BY seq`;
}

async function lastSeq(): Promise<number> {
  const [{ seq }] = await pg.sql`SELECT coalesce(max(seq), 0)::int AS seq FROM passage_changes`;
  return seq;
}

test("inserting a passage and its vector, changing it and deleting it are logged, each replacing the passage's earlier change", async () => {
  const start = await lastSeq();
  const [{ id }] = await insertPassage(pg.sql, "corpus:gdpr", 1);
  const [other] = await insertPassage(pg.sql, "corpus:gdpr", 2);
  const logged = async () => (await changesAfter(start)).map(({ op, chunkId, documentId }) => [op, chunkId, documentId]);
  expect(await logged()).toEqual([["insert", id, "corpus:gdpr"], ["insert", other.id, "corpus:gdpr"]]);
  const vector = new Uint8Array(new Float32Array([0.25, -0.5]).buffer);
  await pg.sql`INSERT INTO search_chunk_vectors (chunk_id, embedding) VALUES (${id}, ${vector})`;
  expect(await logged()).toEqual([["insert", other.id, "corpus:gdpr"], ["insert", id, "corpus:gdpr"]]);
  await pg.sql`UPDATE search_chunks SET title = 'Notification' WHERE id = ${id}`;
  const [updated] = await changesAfter(start).then((rows) => rows.filter((r) => r.chunkId === id));
  await pg.sql`DELETE FROM search_chunks WHERE id = ${id}`;
  const changes = await changesAfter(start);
  expect(changes.map(({ op, chunkId, documentId }) => [op, chunkId, documentId])).toEqual([
    ["insert", other.id, "corpus:gdpr"],
    ["delete", id, "corpus:gdpr"],
  ]);
  expect(changes[1]!.seq).toBeGreaterThan(updated!.seq);
  const [{ n }] = await pg.sql`SELECT count(*)::int AS n FROM search_chunk_vectors WHERE chunk_id = ${id}`;
  expect(n).toBe(0);
});

test("a vector comes back as the bytes written (little-endian float32, as SQLite holds it)", async () => {
  const [{ id }] = await insertPassage(pg.sql, "corpus:bytes", 1);
  const floats = new Float32Array([1.5, -2.25, 3e-8]);
  await pg.sql`INSERT INTO search_chunk_vectors (chunk_id, embedding) VALUES (${id}, ${new Uint8Array(floats.buffer)})`;
  const [{ embedding }] = await pg.sql`SELECT embedding FROM search_chunk_vectors WHERE chunk_id = ${id}`;
  expect(new Float32Array(new Uint8Array(embedding).buffer)).toEqual(floats);
});

test("a writer of passages waits for the one before it to commit, so seq order is commit order", async () => {
  const start = await lastSeq();
  const [first, second] = [pg.connect(pg.url, 1), pg.connect(pg.url, 1)];
  let releaseFirst!: () => void;
  const firstMayCommit = new Promise<void>((resolve) => (releaseFirst = resolve));
  let firstInserted!: () => void;
  const firstHasInserted = new Promise<void>((resolve) => (firstInserted = resolve));
  const committed: string[] = [];
  const firstTx = first.begin(async (tx) => {
    await insertPassage(tx, "doc-first", 1);
    firstInserted();
    await firstMayCommit;
  }).then(() => committed.push("first"));
  await firstHasInserted;
  const secondTx = second.begin(async (tx) => {
    await insertPassage(tx, "doc-second", 1);
  }).then(() => committed.push("second"));
  await Bun.sleep(300);
  expect(committed).toEqual([]);
  releaseFirst();
  await Promise.all([firstTx, secondTx]);
  expect(committed).toEqual(["first", "second"]);
  expect((await changesAfter(start)).map((c) => c.documentId)).toEqual(["doc-first", "doc-second"]);
});

test("a rolled-back passage leaves no change behind", async () => {
  const start = await lastSeq();
  await pg.sql.begin(async (tx) => {
    await insertPassage(tx, "doc-rolled-back", 1);
    throw new Error("abandon");
  }).catch(() => undefined);
  expect(await changesAfter(start)).toEqual([]);
});

test("jurisdiction_slugs must be JSON, as SQLite's json_valid CHECK demands", async () => {
  const error = await insertPassage(pg.sql, "doc-bad-json", 1, "[eu").then(() => undefined, (e: { errno?: string }) => e);
  expect(error?.errno).toBe("23514");
});
