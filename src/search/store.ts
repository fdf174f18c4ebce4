/**
 * SQL for the knowledge-base index: passages (search_chunks), BM25 (search_fts), vectors
 * (search_vec, a sqlite-vec vec0 table partitioned by scope) and citation keys.
 *
 * Scopes: a shared passage belongs to each of its jurisdictions ("us-ny"); an
 * organisation's passage to "org:<orgId>:<slug>" per slug, or "org:<orgId>:*" when its
 * document has no jurisdictions. A search names exactly the scopes it may see; both
 * indexes filter by them inside the search (FTS: scope tokens in the MATCH; vec0: owner
 * partition + jurisdiction metadata column), never by cutting down a global top-k.
 */
import type { Database } from "bun:sqlite";
import { uuidv7 } from "../ids";
import { makeCentroids, nearestCentroid, nearestCentroids, trainCentroids, type Centroids } from "./ivf";

export const VECTOR_TABLE = "search_vec";

export interface ChunkRow {
  id: number;
  document_id: string;
  owner_org_id: string | null;
  position: number;
  source: string;
  citation_path: string;
  heading: string;
  title: string;
  content: string;
  jurisdiction_slugs: string;
  content_hash: string;
}

export interface NewChunk {
  documentId: string;
  ownerOrgId: string | null;
  position: number;
  source: string;
  citationPath: string;
  heading: string;
  title: string;
  content: string;
  jurisdictions: string[];
  contentHash: string;
}

/** Owner partition of the vector table: the shared corpus, or one organisation's documents. */
export const SHARED_OWNER = "shared";
/** Jurisdiction value of an organisation passage whose document applies everywhere. */
export const ANY_JURISDICTION = "*";

/**
 * FTS token standing for a scope: hex, so the tokenizer keeps it whole, and a pure
 * function of the scope, so tokens written by one version match queries of the next.
 */
export function scopeToken(scope: string): string {
  return `z${Buffer.from(scope, "utf8").toString("hex")}`;
}

/**
 * FTS token every organisation passage carries ("org:" is no scope: organisation scopes
 * name the organisation, and slugs have no colon). A search that may read the whole shared
 * corpus excludes the other organisations' passages by it, instead of intersecting with a
 * token every shared passage carries: a third of BM25's time at 100k passages.
 */
const ORGANISATION_PASSAGE_TOKEN = scopeToken("org:");

export function orgScope(orgId: string, slug: string | "*"): string {
  return `org:${orgId}:${slug}`;
}

export function scopesOfChunk(ownerOrgId: string | null, jurisdictions: readonly string[]): string[] {
  if (ownerOrgId === null) return [...jurisdictions];
  return jurisdictions.length === 0 ? [orgScope(ownerOrgId, "*")] : jurisdictions.map((s) => orgScope(ownerOrgId, s));
}

/** Partitions one search may read: the shared jurisdictions plus the caller's own documents. */
export function scopesOfSearch(orgId: string, jurisdictions: readonly string[]): string[] {
  return [...jurisdictions, ...jurisdictions.map((s) => orgScope(orgId, s)), orgScope(orgId, "*")];
}

/** Rows read per query while rebuilding, sampling or moving index rows: bounds memory. */
const REBUILD_BATCH_ROWS = 10_000;

// ---------- index metadata and the vector table ----------

export interface IndexMeta {
  embedderId: string;
  dimensions: number;
}

export function readIndexMeta(db: Database): IndexMeta | undefined {
  const rows = db.query<{ key: string; value: string }, []>("SELECT key, value FROM search_index_meta").all();
  const map = new Map(rows.map((r) => [r.key, r.value]));
  const embedderId = map.get("embedder_id");
  const dimensions = Number(map.get("dimensions"));
  return embedderId === undefined || !Number.isInteger(dimensions) ? undefined : { embedderId, dimensions };
}

export function writeIndexMeta(db: Database, meta: IndexMeta): void {
  const upsert = db.query("INSERT INTO search_index_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value");
  upsert.run("embedder_id", meta.embedderId);
  upsert.run("dimensions", String(meta.dimensions));
}

export function vectorTableExists(db: Database): boolean {
  return db.query("SELECT 1 FROM sqlite_master WHERE name = ?").get(VECTOR_TABLE) !== null;
}

/**
 * Leading dimensions the vector table's int8 copies keep, read from the table's own
 * declaration (so it is right whichever version created the table), or undefined if there is no table.
 */
export function shortlistDimensionsOf(db: Database): number | undefined {
  const sql = db.query<{ sql: string }, [string]>("SELECT sql FROM sqlite_master WHERE name = ?").get(VECTOR_TABLE)?.sql;
  const declared = sql === undefined ? undefined : /INT8\[(\d+)\]/i.exec(sql)?.[1];
  return declared === undefined ? undefined : Number(declared);
}

/**
 * An int8 copy of each vector's leading `shortlistDimensions` (unit-range scalar
 * quantization), partitioned by scope, for the KNN shortlist; full floats for re-scoring
 * live in search_chunk_vectors. Measured on this embedder (256-d, strongly anisotropic:
 * every passage shares a large common direction), sign-bit quantization kept only 26–55%
 * of the exact top 10 even with a 200-row shortlist, int8 98–100% with 20–50 rows.
 */
export function createVectorTable(db: Database, shortlistDimensions: number): void {
  const d = shortlistDimensions;
  if (!Number.isInteger(d) || d < 8 || d > 8192 || d % 8 !== 0) {
    throw new Error(`embedder shortlist dimensions must be a multiple of 8 from 8 to 8192, got ${d}`);
  }
  // Partitioned by owner (a search reads the shared partition and its own organisation's)
  // and by inverted-file cluster (a search of a large shared corpus reads only the clusters
  // nearest the query; 0 = not clustered); jurisdiction is a metadata column filtered
  // inside the KNN scan of each partition.
  db.exec(`CREATE VIRTUAL TABLE ${VECTOR_TABLE} USING vec0(
    owner TEXT PARTITION KEY,
    cluster INTEGER PARTITION KEY,
    jurisdiction TEXT,
    embedding_int8 INT8[${d}]
  )`);
}

export function dropVectorTable(db: Database): void {
  db.exec(`DROP TABLE IF EXISTS ${VECTOR_TABLE}`);
}

// ---------- writes ----------

export function chunksOfDocument(db: Database, documentId: string): Pick<ChunkRow, "id" | "position" | "content_hash">[] {
  return db
    .query<Pick<ChunkRow, "id" | "position" | "content_hash">, [string]>(
      "SELECT id, position, content_hash FROM search_chunks WHERE document_id = ? ORDER BY position",
    )
    .all(documentId);
}

export function insertChunk(
  db: Database,
  chunk: NewChunk,
  fts: FtsText,
  citationKeys: readonly string[],
  vector: Float32Array,
): number {
  const { lastInsertRowid } = db
    .query(
      `INSERT INTO search_chunks (document_id, owner_org_id, position, source, citation_path, heading, title, content, jurisdiction_slugs, content_hash)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(
      chunk.documentId,
      chunk.ownerOrgId,
      chunk.position,
      chunk.source,
      chunk.citationPath,
      chunk.heading,
      chunk.title,
      chunk.content,
      JSON.stringify(chunk.jurisdictions),
      chunk.contentHash,
    );
  const id = Number(lastInsertRowid);
  insertFtsRow(db, id, chunk.ownerOrgId, chunk.jurisdictions, fts);
  const key = db.query("INSERT OR IGNORE INTO search_citation_keys (citation_key, chunk_id) VALUES (?, ?)");
  for (const k of citationKeys) key.run(k, id);
  insertVectors(db, id, chunk.ownerOrgId, chunk.jurisdictions, vector);
  return id;
}

export interface FtsText {
  citation: string;
  heading: string;
  body: string;
}

function insertFtsRow(db: Database, chunkId: number, ownerOrgId: string | null, jurisdictions: readonly string[], fts: FtsText): void {
  const tokens = scopesOfChunk(ownerOrgId, jurisdictions).map(scopeToken);
  if (ownerOrgId !== null) tokens.push(ORGANISATION_PASSAGE_TOKEN);
  db.query("INSERT INTO search_fts (rowid, citation, heading, body, scopes) VALUES (?, ?, ?, ?, ?)").run(
    chunkId,
    fts.citation,
    fts.heading,
    fts.body,
    tokens.join(" "),
  );
}

/**
 * Rewrites the BM25 row of every organisation passage (`text` gives its columns), so rows
 * written before the organisation-passage token existed carry it.
 */
export function rewriteOrganisationFtsRows(db: Database, text: (chunk: ChunkRow) => FtsText): void {
  const batch = db.query<ChunkRow, [number, number]>("SELECT * FROM search_chunks WHERE owner_org_id IS NOT NULL AND id > ? ORDER BY id LIMIT ?");
  const del = db.query("DELETE FROM search_fts WHERE rowid = ?");
  for (let chunks = batch.all(0, REBUILD_BATCH_ROWS); chunks.length > 0; chunks = batch.all(chunks.at(-1)!.id, REBUILD_BATCH_ROWS)) {
    for (const c of chunks) {
      del.run(c.id);
      insertFtsRow(db, c.id, c.owner_org_id, JSON.parse(c.jurisdiction_slugs) as string[], text(c));
    }
  }
}

export function insertVectors(db: Database, chunkId: number, ownerOrgId: string | null, jurisdictions: readonly string[], vector: Float32Array): void {
  db.query("INSERT INTO search_chunk_vectors (chunk_id, embedding) VALUES (?, ?) ON CONFLICT (chunk_id) DO UPDATE SET embedding = excluded.embedding").run(
    chunkId,
    vector,
  );
  const scopeRow = db.query("INSERT INTO search_chunk_scopes (chunk_id, scope) VALUES (?, ?)");
  const owner = ownerOrgId ?? SHARED_OWNER;
  const slugs = ownerOrgId !== null && jurisdictions.length === 0 ? [ANY_JURISDICTION] : jurisdictions;
  // Organisations' passages stay unclustered: a search scans its own organisation's whole partition.
  const centroids = ownerOrgId === null ? loadCentroids(db) : undefined;
  const cluster = centroids === undefined ? UNCLUSTERED : nearestCentroid(centroids, vector) + 1;
  const prefix = vector.slice(0, shortlistDimensionsOf(db));
  for (const slug of slugs) {
    const scope = ownerOrgId === null ? slug : orgScope(ownerOrgId, slug);
    const { lastInsertRowid } = scopeRow.run(chunkId, scope);
    insertQuantized(db, Number(lastInsertRowid), owner, cluster, slug, prefix);
  }
}

/** `prefix`: the vector's leading dimensions the table keeps (see shortlistDimensionsOf). */
function insertQuantized(db: Database, vecRowid: number, owner: string, cluster: number, jurisdiction: string, prefix: Float32Array): void {
  db.query(
    `INSERT INTO ${VECTOR_TABLE} (rowid, owner, cluster, jurisdiction, embedding_int8) VALUES (?, ?, ?, ?, vec_quantize_int8(?, 'unit'))`,
  ).run(vecRowid, owner, cluster, jurisdiction, prefix);
}

// ---------- inverted-file clusters of the shared corpus ----------

/** Cluster partition of vectors scanned whole. */
export const UNCLUSTERED = 0;

function floatsOfBlob(blob: Uint8Array): Float32Array {
  return new Float32Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength));
}

/** Centroids per database, keyed by the training's id so a retrain by another process is seen. */
const centroidCache = new WeakMap<Database, { ivfId: string | undefined; centroids: Centroids | undefined }>();

export function loadCentroids(db: Database): Centroids | undefined {
  const ivfId = db.query<{ value: string }, []>("SELECT value FROM search_index_meta WHERE key = 'ivf_id'").get()?.value;
  const cached = centroidCache.get(db);
  if (cached !== undefined && cached.ivfId === ivfId) return cached.centroids;
  const rows = db.query<{ centroid: Uint8Array }, []>("SELECT centroid FROM search_ivf_centroids ORDER BY cluster").all();
  let centroids: Centroids | undefined;
  if (ivfId !== undefined && rows.length > 0) {
    const first = floatsOfBlob(rows[0]!.centroid);
    const values = new Float32Array(rows.length * first.length);
    rows.forEach((r, i) => values.set(floatsOfBlob(r.centroid), i * first.length));
    centroids = makeCentroids(values, first.length);
  }
  centroidCache.set(db, { ivfId, centroids });
  return centroids;
}

/** Forgets the centroids (re-embedding makes them meaningless); vectors inserted next stay unclustered. */
export function clearCentroids(db: Database): void {
  db.exec("DELETE FROM search_ivf_centroids");
  db.exec("DELETE FROM search_index_meta WHERE key IN ('ivf_id', 'ivf_vectors')");
}

/** Shared vectors counted when the centroids were trained, or undefined if there are none. */
export function clusteredVectorCount(db: Database): number | undefined {
  const value = db.query<{ value: string }, []>("SELECT value FROM search_index_meta WHERE key = 'ivf_vectors'").get()?.value;
  return value === undefined ? undefined : Number(value);
}

/** Rows of the shared partition (one per passage × jurisdiction). */
export function sharedVectorCount(db: Database): number {
  return db.query<{ n: number }, []>("SELECT count(*) AS n FROM search_chunk_scopes WHERE scope < 'org:' OR scope >= 'org;'").get()!.n;
}

export interface ClusterOptions {
  clusters: number;
  /** Vectors the centroids are trained on (every n-th row, so the same index gives the same sample). */
  sampleVectors: number;
  rounds: number;
  batchVectors: number;
  seed: number;
}

/** Shared rows in vec_rowid order, with their float vectors, `limit` at a time. */
function sharedRowsAfter(db: Database, afterRowid: number, limit: number): { vecRowid: number; scope: string; embedding: Uint8Array }[] {
  return db
    .query<{ vecRowid: number; scope: string; embedding: Uint8Array }, [number, number]>(
      `SELECT s.vec_rowid AS vecRowid, s.scope AS scope, v.embedding AS embedding
       FROM search_chunk_scopes s JOIN search_chunk_vectors v ON v.chunk_id = s.chunk_id
       WHERE s.vec_rowid > ? AND (s.scope < 'org:' OR s.scope >= 'org;') ORDER BY s.vec_rowid LIMIT ?`,
    )
    .all(afterRowid, limit);
}


/**
 * Trains centroids over the shared corpus's vectors and moves every shared vector into the
 * partition of its nearest centroid, in one transaction: under WAL, searches meanwhile
 * read the previous centroids and layout, never a mixture.
 */
export function clusterSharedVectors(db: Database, dimensions: number, options: ClusterOptions): { vectors: number; clusters: number } {
  const total = sharedVectorCount(db);
  const stride = Math.max(1, Math.floor(total / options.sampleVectors));
  const sample: Float32Array[] = [];
  for (let after = 0, seen = 0; ; ) {
    const rows = sharedRowsAfter(db, after, REBUILD_BATCH_ROWS);
    if (rows.length === 0) break;
    for (const r of rows) if (seen++ % stride === 0) sample.push(floatsOfBlob(r.embedding));
    after = rows[rows.length - 1]!.vecRowid;
  }
  const centroids = trainCentroids(sample, dimensions, options);
  db.transaction(() => {
    clearCentroids(db);
    const insert = db.query("INSERT INTO search_ivf_centroids (cluster, centroid) VALUES (?, ?)");
    for (let c = 0; c < centroids.count; c++) insert.run(c + 1, centroids.values.slice(c * dimensions, (c + 1) * dimensions));
    const upsert = db.query("INSERT INTO search_index_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value");
    upsert.run("ivf_id", uuidv7());
    upsert.run("ivf_vectors", String(total));
    const del = db.query(`DELETE FROM ${VECTOR_TABLE} WHERE rowid = ?`);
    const kept = shortlistDimensionsOf(db);
    for (let after = 0; ; ) {
      const rows = sharedRowsAfter(db, after, REBUILD_BATCH_ROWS);
      if (rows.length === 0) break;
      for (const r of rows) {
        const vector = floatsOfBlob(r.embedding);
        del.run(r.vecRowid);
        insertQuantized(db, r.vecRowid, SHARED_OWNER, nearestCentroid(centroids, vector) + 1, r.scope, vector.slice(0, kept));
      }
      after = rows[rows.length - 1]!.vecRowid;
    }
  }).immediate();
  return { vectors: total, clusters: centroids.count };
}

/**
 * Recreates the vector table with int8 copies of `shortlistDimensions` leading dimensions,
 * from the stored float vectors (nothing is re-embedded), in one transaction: searches
 * meanwhile read the previous table.
 */
export function rebuildVectorTable(db: Database, shortlistDimensions: number): { vectors: number } {
  let vectors = 0;
  db.transaction(() => {
    dropVectorTable(db);
    createVectorTable(db, shortlistDimensions);
    const centroids = loadCentroids(db);
    for (let after = 0; ; ) {
      const rows = db
        .query<{ vecRowid: number; scope: string; ownerOrgId: string | null; embedding: Uint8Array }, [number, number]>(
          `SELECT s.vec_rowid AS vecRowid, s.scope AS scope, c.owner_org_id AS ownerOrgId, v.embedding AS embedding
           FROM search_chunk_scopes s JOIN search_chunk_vectors v ON v.chunk_id = s.chunk_id JOIN search_chunks c ON c.id = s.chunk_id
           WHERE s.vec_rowid > ? ORDER BY s.vec_rowid LIMIT ?`,
        )
        .all(after, REBUILD_BATCH_ROWS);
      if (rows.length === 0) break;
      for (const r of rows) {
        const vector = floatsOfBlob(r.embedding);
        const prefix = vector.slice(0, shortlistDimensions);
        if (r.ownerOrgId === null) {
          const cluster = centroids === undefined ? UNCLUSTERED : nearestCentroid(centroids, vector) + 1;
          insertQuantized(db, r.vecRowid, SHARED_OWNER, cluster, r.scope, prefix);
        } else {
          insertQuantized(db, r.vecRowid, r.ownerOrgId, UNCLUSTERED, r.scope.slice(orgScope(r.ownerOrgId, "").length), prefix);
        }
      }
      vectors += rows.length;
      after = rows[rows.length - 1]!.vecRowid;
    }
  }).immediate();
  return { vectors };
}

export function deleteChunk(db: Database, chunkId: number): void {
  deleteVectorsOfChunk(db, chunkId);
  db.query("DELETE FROM search_fts WHERE rowid = ?").run(chunkId);
  db.query("DELETE FROM search_chunks WHERE id = ?").run(chunkId);
}

function deleteVectorsOfChunk(db: Database, chunkId: number): void {
  const rows = db.query<{ vec_rowid: number }, [number]>("SELECT vec_rowid FROM search_chunk_scopes WHERE chunk_id = ?").all(chunkId);
  const del = db.query(`DELETE FROM ${VECTOR_TABLE} WHERE rowid = ?`);
  for (const r of rows) del.run(r.vec_rowid);
  db.query("DELETE FROM search_chunk_scopes WHERE chunk_id = ?").run(chunkId);
  db.query("DELETE FROM search_chunk_vectors WHERE chunk_id = ?").run(chunkId);
}

/** Passages containing `term`, counting no further than `cap` (so a common term costs at most cap rows). */
export function termDocCount(db: Database, term: string, cap: number): number {
  return db
    .query<{ n: number }, [string, number]>("SELECT count(*) AS n FROM (SELECT 1 FROM search_fts WHERE search_fts MATCH ? LIMIT ?)")
    .get(`"${term.replace(/['"’]/g, " ")}"`, cap)!.n;
}

/** Highest passage id: changes whenever passages are added, so it keys caches of index statistics. */
export function newestChunkId(db: Database): number {
  return db.query<{ id: number | null }, []>("SELECT max(id) AS id FROM search_chunks").get()!.id ?? 0;
}

export function countChunks(db: Database): number {
  return db.query<{ n: number }, []>("SELECT count(*) AS n FROM search_chunks").get()!.n;
}

/** Batches of passages in id order, for re-embedding: (id > afterId) LIMIT n. */
export function chunkBatch(db: Database, afterId: number, limit: number): ChunkRow[] {
  return db.query<ChunkRow, [number, number]>("SELECT * FROM search_chunks WHERE id > ? ORDER BY id LIMIT ?").all(afterId, limit);
}

export function replaceVectorsOfChunk(db: Database, chunk: ChunkRow, vector: Float32Array): void {
  deleteVectorsOfChunk(db, chunk.id);
  insertVectors(db, chunk.id, chunk.owner_org_id, JSON.parse(chunk.jurisdiction_slugs) as string[], vector);
}

// ---------- reads ----------

function placeholders(n: number): string {
  return Array.from({ length: n }, () => "?").join(", ");
}

export interface FtsHit {
  chunkId: number;
  /** FTS5 bm25(): negative, lower is better. */
  bm25: number;
}

export interface FtsWeights {
  citation: number;
  heading: number;
  body: number;
}

/** What one search may read, reduced to what exists in the index. */
export interface SearchScope {
  /** The requested jurisdictions cover every jurisdiction of the shared corpus. */
  allShared: boolean;
  jurisdictions: readonly string[];
  /** The organisation's own scopes that hold passages and that this search may read. */
  orgScopes: string[];
}

export function resolveSearchScope(db: Database, orgId: string, jurisdictions: readonly string[]): SearchScope {
  const requested = new Set(jurisdictions);
  const probe = db.query<{ one: number }, [string]>("SELECT 1 AS one FROM search_chunk_scopes WHERE scope = ? LIMIT 1");
  const others = db
    .query<{ slug: string }, []>("SELECT slug FROM jurisdictions")
    .all()
    .filter((j) => !requested.has(j.slug));
  const allShared = others.every((j) => probe.get(j.slug) === null);
  const prefix = orgScope(orgId, "");
  const orgScopes = db
    .query<{ scope: string }, [string, string]>("SELECT DISTINCT scope FROM search_chunk_scopes WHERE scope >= ? AND scope < ?")
    .all(prefix, `${prefix}\u{10FFFF}`)
    .map((r) => r.scope)
    .filter((scope) => {
      const slug = scope.slice(prefix.length);
      return slug === ANY_JURISDICTION || requested.has(slug);
    });
  return { allShared, jurisdictions, orgScopes };
}

/**
 * BM25 over the passages of a search scope, filtered inside the MATCH, so FTS5 never scores
 * a passage the caller may not see (weight 0 keeps scope tokens out of the score). A search
 * of the whole shared corpus excludes organisation passages other than its own readable
 * ones; any other search requires one of its scope tokens.
 */
export function ftsSearch(db: Database, match: string, scope: SearchScope, weights: FtsWeights, limit: number): FtsHit[] {
  const own = scope.orgScopes.map(scopeToken);
  let within: string;
  if (scope.allShared) {
    within = `NOT scopes : (${ORGANISATION_PASSAGE_TOKEN}${own.length === 0 ? "" : ` NOT (${own.join(" OR ")})`})`;
  } else {
    const tokens = [...scope.jurisdictions.map(scopeToken), ...own];
    if (tokens.length === 0) return [];
    within = `AND scopes : (${tokens.join(" OR ")})`;
  }
  return db
    .query<FtsHit, (string | number)[]>(
      `SELECT rowid AS chunkId, bm25(search_fts, ?, ?, ?, 0) AS bm25
       FROM search_fts WHERE search_fts MATCH ? ORDER BY bm25 LIMIT ?`,
    )
    .all(weights.citation, weights.heading, weights.body, `(${match}) ${within}`, limit);
}

export interface VectorHit {
  chunkId: number;
  /** Cosine similarity, -1..1, higher is better. */
  similarity: number;
}

/**
 * A denser corpus has more near-ties at int8 precision, more so on an embedder's shortlist
 * prefix: over 1M vectors, 100 rows kept 98% of the exact top 10 where 50 kept 92%.
 */
const SHORTLIST_ROWS_PER_CLUSTERED_VECTOR = 100 / 1_000_000;

/**
 * KNN inside what a search may see: the shared partition filtered to `jurisdictions`, and
 * the organisation's own partition filtered to `jurisdictions` plus its documents that
 * apply everywhere. Filtering happens inside vec0's scan (metadata column), so a small
 * jurisdiction is never crowded out. `shortlist` rows by int8 distance from each partition
 * are re-scored with full-precision cosine; the best `limit` distinct passages are returned.
 *
 * Once the shared corpus is clustered, its part reads the `probes` clusters nearest the
 * query, each filtered by jurisdiction inside its own scan; if those hold fewer than
 * `shortlist` rows of the requested jurisdictions (a small jurisdiction), further clusters
 * are read, nearest first, until they do or none is left. A large corpus's shortlist is
 * wider (see SHORTLIST_ROWS_PER_CLUSTERED_VECTOR).
 */
export function vectorSearch(
  db: Database,
  query: Float32Array,
  orgId: string,
  scope: SearchScope,
  shortlist: number,
  limit: number,
  probes: number,
): VectorHit[] {
  const rowids: number[] = [];
  // The leading dimensions the int8 copies keep, looked up once for every partition scanned.
  const prefix = query.slice(0, shortlistDimensionsOf(db));
  if (scope.allShared || scope.jurisdictions.length > 0) {
    const filter = scope.allShared ? [] : [...scope.jurisdictions];
    const centroids = loadCentroids(db);
    if (centroids === undefined) {
      rowids.push(...knnRowids(db, prefix, SHARED_OWNER, [undefined], filter, shortlist));
    } else {
      const wide = Math.max(shortlist, Math.ceil((clusteredVectorCount(db) ?? 0) * SHORTLIST_ROWS_PER_CLUSTERED_VECTOR));
      const order = nearestCentroids(centroids, query, centroids.count);
      let read = Math.min(probes, order.length);
      // UNCLUSTERED: shared rows inserted while the corpus was too small to cluster; none after training.
      let next = [UNCLUSTERED, ...order.slice(0, read).map((c) => c + 1)];
      let found: { rowid: number; distance: number }[] = [];
      for (let batch = probes; ; batch *= 2) {
        found = found.concat(knnHits(db, prefix, SHARED_OWNER, next, filter, wide));
        if (found.length >= wide || read >= order.length) break;
        next = order.slice(read, read + batch).map((c) => c + 1);
        read += next.length;
      }
      found.sort((a, b) => a.distance - b.distance);
      rowids.push(...found.slice(0, wide).map((h) => h.rowid));
    }
  }
  if (scope.orgScopes.length > 0) {
    const slugs = scope.orgScopes.map((s) => s.slice(orgScope(orgId, "").length));
    rowids.push(...knnRowids(db, prefix, orgId, [undefined], slugs, shortlist));
  }
  if (rowids.length === 0) return [];
  // GROUP BY: a passage in several jurisdictions has one row per jurisdiction but counts once.
  return db
    .query<VectorHit, (Float32Array | string | number)[]>(
      `SELECT s.chunk_id AS chunkId, 1 - min(vec_distance_cosine(v.embedding, ?)) AS similarity
       FROM json_each(?) j JOIN search_chunk_scopes s ON s.vec_rowid = j.value
       JOIN search_chunk_vectors v ON v.chunk_id = s.chunk_id
       GROUP BY s.chunk_id ORDER BY similarity DESC LIMIT ?`,
    )
    .all(query, JSON.stringify(rowids), limit);
}

/**
 * int8 KNN in each given cluster partition of `owner` (undefined: all of the owner's
 * clusters), jurisdiction-filtered inside each scan; `shortlist` nearest rows per partition.
 * `prefix`: the query's leading dimensions the table keeps (see shortlistDimensionsOf).
 */
function knnHits(
  db: Database,
  prefix: Float32Array,
  owner: string,
  clusters: readonly (number | undefined)[],
  jurisdictions: readonly string[],
  shortlist: number,
): { rowid: number; distance: number }[] {
  const parts: string[] = [];
  const params: (Float32Array | string | number)[] = [];
  for (const cluster of clusters) {
    parts.push(
      `SELECT rowid, distance FROM ${VECTOR_TABLE} WHERE embedding_int8 MATCH vec_quantize_int8(?, 'unit') AND k = ? AND owner = ?` +
        (cluster === undefined ? "" : " AND cluster = ?") +
        (jurisdictions.length === 0 ? "" : ` AND jurisdiction IN (${placeholders(jurisdictions.length)})`),
    );
    params.push(prefix, shortlist, owner, ...(cluster === undefined ? [] : [cluster]), ...jurisdictions);
  }
  return db.query<{ rowid: number; distance: number }, (Float32Array | string | number)[]>(parts.join(" UNION ALL ")).all(...params);
}

function knnRowids(db: Database, prefix: Float32Array, owner: string, clusters: readonly (number | undefined)[], jurisdictions: readonly string[], shortlist: number): number[] {
  return knnHits(db, prefix, owner, clusters, jurisdictions, shortlist).map((h) => h.rowid);
}

/** Rows (passage × scope) the given scopes hold, counting no further than `cap`. */
export function scopeRowCount(db: Database, scopes: readonly string[], cap: number): number {
  if (scopes.length === 0) return 0;
  return db
    .query<{ n: number }, (string | number)[]>(
      `SELECT count(*) AS n FROM (SELECT 1 FROM search_chunk_scopes WHERE scope IN (${placeholders(scopes.length)}) LIMIT ?)`,
    )
    .get(...scopes, cap)!.n;
}

/**
 * Exact cosine KNN over the given scopes (no quantization): the benchmark's ground truth, and
 * the cheaper path for a small scope, whose rows the scope index finds without a vec0 scan.
 */
export function exactVectorSearch(db: Database, query: Float32Array, scopes: readonly string[], limit: number): VectorHit[] {
  return db
    .query<VectorHit, (Float32Array | string | number)[]>(
      `SELECT s.chunk_id AS chunkId, 1 - min(vec_distance_cosine(v.embedding, ?)) AS similarity
       FROM search_chunk_scopes s JOIN search_chunk_vectors v ON v.chunk_id = s.chunk_id
       WHERE s.scope IN (${placeholders(scopes.length)})
       GROUP BY s.chunk_id ORDER BY similarity DESC LIMIT ?`,
    )
    .all(query, ...scopes, limit);
}

export function citationLookup(db: Database, keys: readonly string[], scopes: readonly string[]): { chunkId: number; key: string; position: number }[] {
  if (keys.length === 0) return [];
  return db
    .query<{ chunkId: number; key: string; position: number }, string[]>(
      `SELECT k.chunk_id AS chunkId, k.citation_key AS key, c.position AS position
       FROM search_citation_keys k JOIN search_chunks c ON c.id = k.chunk_id
       WHERE k.citation_key IN (${placeholders(keys.length)})
         AND EXISTS (SELECT 1 FROM search_chunk_scopes s WHERE s.chunk_id = k.chunk_id AND +s.scope IN (${placeholders(scopes.length)}))`,
    )
    .all(...keys, ...scopes);
}

export function loadChunks(db: Database, ids: readonly number[]): Map<number, ChunkRow> {
  if (ids.length === 0) return new Map();
  const rows = db.query<ChunkRow, number[]>(`SELECT * FROM search_chunks WHERE id IN (${placeholders(ids.length)})`).all(...ids);
  return new Map(rows.map((r) => [r.id, r]));
}

/** Those of the given passages that belong to any of `scopes`. */
export function chunksInScopes(db: Database, ids: readonly number[], scopes: readonly string[]): Set<number> {
  if (ids.length === 0 || scopes.length === 0) return new Set();
  const rows = db
    .query<{ chunk_id: number }, (string | number)[]>(
      `SELECT DISTINCT chunk_id FROM search_chunk_scopes WHERE chunk_id IN (${placeholders(ids.length)}) AND scope IN (${placeholders(scopes.length)})`,
    )
    .all(...ids, ...scopes);
  return new Set(rows.map((r) => r.chunk_id));
}

/** Full-precision embeddings of the given passages. */
export function chunkVectors(db: Database, ids: readonly number[]): Map<number, Float32Array> {
  if (ids.length === 0) return new Map();
  const rows = db
    .query<{ chunk_id: number; embedding: Uint8Array }, number[]>(`SELECT chunk_id, embedding FROM search_chunk_vectors WHERE chunk_id IN (${placeholders(ids.length)})`)
    .all(...ids);
  return new Map(rows.map((r) => [r.chunk_id, floatsOfBlob(r.embedding)]));
}

export function jurisdictionNames(db: Database): Map<string, string> {
  const rows = db.query<{ slug: string; name: string }, []>("SELECT slug, name FROM jurisdictions").all();
  return new Map(rows.map((r) => [r.slug, r.name]));
}
