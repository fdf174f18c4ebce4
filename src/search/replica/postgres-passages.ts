// What a node's search replica reads from PostgreSQL: the passage change log, the passages
// and vectors as they now stand, the embedder that made the vectors, and the organisation
// and jurisdiction rows the node's own SQLite needs beside its passages.
import type { SQL } from "bun";
import type { NewChunk } from "../chunk-store";
import type { IndexMeta } from "../meta-store";
import { floatsOfBlob } from "../sql";

export interface PassageChange {
  seq: number;
  op: "insert" | "delete";
  chunkId: number;
  changedAtMs: number;
}

/** A passage as PostgreSQL holds it: the fields a node indexes, under the same id. */
export interface PostgresPassage extends NewChunk {
  id: number;
  /** Absent until the passage's vector is written (a later change reloads it). */
  vector: Float32Array | undefined;
}

/** The embedder PostgreSQL's vectors were made with, or undefined if none is recorded. */
export async function postgresEmbedder(sql: SQL): Promise<IndexMeta | undefined> {
  const rows: { key: string; value: string }[] = await sql`SELECT key, value FROM search_index_meta WHERE key IN ('embedder_id', 'dimensions')`;
  const map = new Map(rows.map((r) => [r.key, r.value]));
  const embedderId = map.get("embedder_id");
  const dimensions = Number(map.get("dimensions"));
  return embedderId === undefined || !Number.isInteger(dimensions) ? undefined : { embedderId, dimensions };
}

export async function postgresHasPassages(sql: SQL): Promise<boolean> {
  const [{ any }] = await sql`SELECT EXISTS (SELECT 1 FROM search_chunks) AS any`;
  return any;
}

/** Changes after `afterSeq`, in seq order, at most `limit`. */
export async function changesAfter(sql: SQL, afterSeq: number, limit: number): Promise<PassageChange[]> {
  const rows: { seq: string; op: "insert" | "delete"; chunk_id: string; changed_at_ms: string }[] =
    await sql`SELECT seq, op, chunk_id, changed_at_ms FROM passage_changes WHERE seq > ${afterSeq} ORDER BY seq LIMIT ${limit}`;
  return rows.map((r) => ({ seq: Number(r.seq), op: r.op, chunkId: Number(r.chunk_id), changedAtMs: Number(r.changed_at_ms) }));
}

/** The newest seq, and when the first change after `afterSeq` was made (undefined: none). */
export async function logPosition(sql: SQL, afterSeq: number): Promise<{ newestSeq: number; firstPendingAtMs: number | undefined }> {
  const [row] = await sql`SELECT (SELECT coalesce(max(seq), 0) FROM passage_changes) AS newest,
    (SELECT changed_at_ms FROM passage_changes WHERE seq > ${afterSeq} ORDER BY seq LIMIT 1) AS pending`;
  return { newestSeq: Number(row.newest), firstPendingAtMs: row.pending === null ? undefined : Number(row.pending) };
}

function passageOfRow(r: Record<string, any>): PostgresPassage {
  return {
    id: Number(r.id),
    documentId: r.document_id,
    ownerOrgId: r.owner_org_id,
    position: Number(r.position),
    source: r.source,
    citationPath: r.citation_path,
    heading: r.heading,
    title: r.title,
    content: r.content,
    jurisdictions: JSON.parse(r.jurisdiction_slugs) as string[],
    contentHash: r.content_hash,
    vector: r.embedding === null ? undefined : floatsOfBlob(r.embedding as Uint8Array),
  };
}

/** The passages of `ids` that exist now, with their vectors. */
export async function passagesByIds(sql: SQL, ids: readonly number[]): Promise<PostgresPassage[]> {
  if (ids.length === 0) return [];
  const rows: Record<string, any>[] = await sql`SELECT c.id, c.document_id, c.owner_org_id, c.position, c.source, c.citation_path, c.heading,
      c.title, c.content, c.jurisdiction_slugs, c.content_hash, v.embedding
    FROM search_chunks c LEFT JOIN search_chunk_vectors v ON v.chunk_id = c.id
    WHERE c.id = ANY(${sql.array(ids.map(String), "BIGINT")})`;
  return rows.map(passageOfRow);
}

/** Up to `limit` passages with an id above `afterId`, in id order, with their vectors (a backup reads them all this way). */
export async function passagesAfter(sql: SQL, afterId: number, limit: number): Promise<PostgresPassage[]> {
  const rows: Record<string, any>[] = await sql`SELECT c.id, c.document_id, c.owner_org_id, c.position, c.source, c.citation_path, c.heading,
      c.title, c.content, c.jurisdiction_slugs, c.content_hash, v.embedding
    FROM search_chunks c LEFT JOIN search_chunk_vectors v ON v.chunk_id = c.id
    WHERE c.id > ${afterId} ORDER BY c.id LIMIT ${limit}`;
  return rows.map(passageOfRow);
}

export interface OrganisationRow {
  id: string;
  name: string;
  monthly_allowance_pence: number;
  created_at_ms: number;
}

export async function organisationsByIds(sql: SQL, ids: readonly string[]): Promise<OrganisationRow[]> {
  if (ids.length === 0) return [];
  const rows: Record<string, any>[] = await sql`SELECT id, name, monthly_allowance_pence, created_at_ms FROM organisations WHERE id = ANY(${sql.array([...ids], "TEXT")})`;
  return rows.map((r) => ({ id: r.id, name: r.name, monthly_allowance_pence: Number(r.monthly_allowance_pence), created_at_ms: Number(r.created_at_ms) }));
}

export async function allJurisdictions(sql: SQL): Promise<{ slug: string; name: string; description: string }[]> {
  return await sql`SELECT slug, name, description FROM jurisdictions ORDER BY slug`;
}
