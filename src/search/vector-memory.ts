/**
 * A search worker's in-memory copy of the vector table's int8 rows (vector-store.ts), grouped
 * by owner and cluster like vec0's partitions, scanned by a SIMD kernel (simd/int8-dots.ts)
 * instead of vec0's KNN: the same rows, the same int8 L2 distance, the same jurisdiction
 * filter, many times faster. The copy is valid for one vector generation (meta-store.ts): a search that finds
 * the table changed since uses vec0's scan, so an insert or delete is seen at once, and the
 * copy is reloaded in slices between searches, at most once per RELOAD_PAUSE_FACTOR × the
 * last load's time, so a stream of writes costs the worker a bounded share of its time.
 * Between slices a load waits for setImmediate, which a steady stream of tasks starves (a
 * worker answers every queued message first), so the worker also lets it read a slice after
 * each answer (advanceLoad): under load the copy arrives instead of never.
 */
import type { Database } from "bun:sqlite";
import { readMetaValue, VECTOR_GENERATION } from "./meta-store";
import { Int8RowSet } from "./simd/int8-dots";
import { VECTOR_TABLE } from "./vector-store";

/** An int8 shortlist: `k` nearest rows by int8 L2 distance in each partition (as vec0's KNN returns them). */
export type Shortlister = (
  prefix: Float32Array,
  owner: string,
  clusters: readonly (number | undefined)[],
  jurisdictions: readonly string[],
  k: number,
) => { rowid: number; distance: number }[];

interface Partition {
  rowids: Float64Array;
  /** Index into the copy's jurisdiction names, per row. */
  codes: Uint16Array;
  /** Where the partition's rows start in the copy's row set; they are consecutive. */
  firstRow: number;
  /** |v|² per row: |q − v|² = |q|² + |v|² − 2 q·v, so the scan only multiplies and adds. */
  normsSquared: Int32Array;
}

interface Copy {
  generation: string;
  dimensions: number;
  /** Every row's int8 vector, partition after partition. */
  vectors: Int8RowSet;
  /** owner → cluster → partition. */
  owners: Map<string, Map<number, Partition>>;
  codes: Map<string, number>;
  rows: number;
}

/** Rows read per slice while loading (~15 ms at 100k rows): searches run between slices, and wait for one at most. */
const LOAD_SLICE_ROWS = 500;
/** After a load that took t ms, the next starts no sooner than this × t later. */
const RELOAD_PAUSE_FACTOR = 20;
/** Distinct jurisdictions a copy holds codes for (Uint16Array). */
const JURISDICTIONS_MAX = 65_535;

export class VectorMemory {
  #copy: Copy | undefined;
  #loading: Promise<boolean> | undefined;
  #noLoadBeforeMs = 0;
  /** Wakes a load waiting between two slices. */
  #resumeLoad: (() => void) | undefined;

  constructor(private readonly db: Database) {}

  /** Rows and bytes held now (the benchmark reports them). */
  get size(): { rows: number; bytes: number } {
    const rows = this.#copy?.rows ?? 0;
    // Per row beside its vector: rowid (8 bytes), jurisdiction code (2), norm (4).
    return { rows, bytes: (this.#copy?.vectors.bytes ?? 0) + rows * 14 };
  }

  /**
   * The in-memory shortlist if the copy matches the table now, else undefined (scan vec0);
   * starts a reload in the background when one is due.
   */
  shortlister(): Shortlister | undefined {
    const generation = readMetaValue(this.db, VECTOR_GENERATION);
    const copy = this.#copy;
    if (generation === undefined) return undefined; // an index maintenance has not given one yet
    if (copy !== undefined && copy.generation === generation) return (...args) => shortlist(this.db, copy, ...args);
    if (Date.now() >= this.#noLoadBeforeMs) void this.load();
    return undefined;
  }

  /**
   * Reads the whole table in slices (yielding between them); the copy is kept only if no
   * write landed meanwhile. Never rejects: a failed load leaves searches on vec0's scan.
   * A load already under way is joined, not repeated.
   */
  load(): Promise<boolean> {
    this.#loading ??= this.#read().finally(() => {
      this.#loading = undefined;
    });
    return this.#loading;
  }

  /** Lets a load under way read its next slice at the caller's next await (a worker calls it after each answer). */
  advanceLoad(): void {
    const resume = this.#resumeLoad;
    this.#resumeLoad = undefined;
    resume?.();
  }

  /** The wait between two slices: the next turn of the event loop, or advanceLoad, whichever comes first. */
  #pause(): Promise<void> {
    return new Promise((resolve) => {
      this.#resumeLoad = resolve;
      setImmediate(resolve);
    });
  }

  async #read(): Promise<boolean> {
    const started = Date.now();
    try {
      const generation = readMetaValue(this.db, VECTOR_GENERATION);
      const copy = generation === undefined ? undefined : await readCopy(this.db, generation, () => this.#pause());
      if (copy === undefined || readMetaValue(this.db, VECTOR_GENERATION) !== generation) return false;
      this.#copy = copy;
      return true;
    } catch {
      return false;
    } finally {
      this.#noLoadBeforeMs = Date.now() + RELOAD_PAUSE_FACTOR * (Date.now() - started);
    }
  }
}

interface Row {
  rowid: number;
  owner: string;
  cluster: number;
  jurisdiction: string;
  e: Uint8Array;
}

async function readCopy(db: Database, generation: string, pause: () => Promise<void>): Promise<Copy | undefined> {
  const sliceIds = db.query<{ id: number }, [number, number]>("SELECT vec_rowid AS id FROM search_chunk_scopes WHERE vec_rowid > ? ORDER BY vec_rowid LIMIT ?");
  // One row at a time: vec0 answers `rowid = ?` from its rowid index (~30 µs), while a
  // `rowid IN (…)` of a slice costs ~0.15 ms a row at 100k rows and more as the table grows
  // (the 1M benchmark's copy took 936 s to load that way).
  const rowOf = db.query<Row, [number]>(`SELECT rowid, owner, cluster, jurisdiction, embedding_int8 AS e FROM ${VECTOR_TABLE} WHERE rowid = ?`);
  const grouped = new Map<string, Map<number, Row[]>>();
  const codes = new Map<string, number>();
  let dimensions = 0;
  let rows = 0;
  for (let after = 0; ; ) {
    const ids = sliceIds.all(after, LOAD_SLICE_ROWS).map((r) => r.id);
    if (ids.length === 0) break;
    for (const row of ids.map((id) => rowOf.get(id))) {
      if (row === null) continue;
      dimensions = row.e.length;
      if (!codes.has(row.jurisdiction)) codes.set(row.jurisdiction, codes.size);
      const clusters = grouped.get(row.owner) ?? new Map<number, Row[]>();
      grouped.set(row.owner, clusters);
      const list = clusters.get(row.cluster) ?? [];
      clusters.set(row.cluster, list);
      list.push(row);
      rows++;
    }
    if (codes.size > JURISDICTIONS_MAX) return undefined;
    after = ids[ids.length - 1]!;
    // Searches queued meanwhile run now (on vec0's scan); a write seen here makes this load moot.
    await pause();
    if (readMetaValue(db, VECTOR_GENERATION) !== generation) return undefined;
  }
  const lists = [...grouped.values()].flatMap((clusters) => [...clusters.values()]);
  const vectors = new Int8RowSet(dimensions, rows, Math.max(1, ...lists.map((l) => l.length)));
  const owners = new Map<string, Map<number, Partition>>();
  let firstRow = 0;
  for (const [owner, clusters] of grouped) {
    const packed = new Map<number, Partition>();
    for (const [cluster, list] of clusters) {
      packed.set(cluster, pack(list, codes, vectors, firstRow));
      firstRow += list.length;
    }
    owners.set(owner, packed);
  }
  return { generation, dimensions, vectors, owners, codes, rows };
}

function pack(list: readonly Row[], codes: ReadonlyMap<string, number>, vectors: Int8RowSet, firstRow: number): Partition {
  const rowids = new Float64Array(list.length);
  const rowCodes = new Uint16Array(list.length);
  const normsSquared = new Int32Array(list.length);
  list.forEach((r, i) => {
    rowids[i] = r.rowid;
    rowCodes[i] = codes.get(r.jurisdiction)!;
    const v = new Int8Array(r.e.buffer, r.e.byteOffset, vectors.dimensions);
    vectors.setRow(firstRow + i, v);
    normsSquared[i] = v.reduce((sum, x) => sum + x * x, 0);
  });
  return { rowids, codes: rowCodes, firstRow, normsSquared };
}

/** The query's int8 copy, quantized by sqlite-vec itself so it is exactly what vec0's KNN compares. */
function quantize(db: Database, prefix: Float32Array): Int8Array {
  const blob = db.query<{ q: Uint8Array }, [Float32Array]>("SELECT vec_quantize_int8(?, 'unit') AS q").get(prefix)!.q;
  return new Int8Array(blob.buffer, blob.byteOffset, blob.length);
}

function shortlist(
  db: Database,
  copy: Copy,
  prefix: Float32Array,
  owner: string,
  clusters: readonly (number | undefined)[],
  jurisdictions: readonly string[],
  k: number,
): { rowid: number; distance: number }[] {
  const partitions = copy.owners.get(owner);
  if (partitions === undefined || k <= 0) return [];
  const query = quantize(db, prefix);
  if (query.length !== copy.dimensions) throw new Error(`query has ${query.length} shortlist dimensions, the vector table ${copy.dimensions}`);
  copy.vectors.setQuery(query);
  // A jurisdiction the copy has no row of matches nothing; no filter matches everything.
  const allowed = new Uint8Array(copy.codes.size).fill(jurisdictions.length === 0 ? 1 : 0);
  for (const j of jurisdictions) {
    const code = copy.codes.get(j);
    if (code !== undefined) allowed[code] = 1;
  }
  const queryNormSquared = query.reduce((sum, x) => sum + x * x, 0);
  const hits: { rowid: number; distance: number }[] = [];
  const best = new TopK(k);
  for (const cluster of clusters) {
    const selected = cluster === undefined ? [...partitions.values()] : [partitions.get(cluster)];
    for (const partition of selected) if (partition !== undefined) scan(copy.vectors, partition, queryNormSquared, allowed, best);
    // vec0 returns each partition's (each UNION ALL part's) own k nearest.
    best.drainInto(hits);
  }
  return hits;
}

/**
 * Squared int8 L2 distance (exact, in integers) of every allowed row to the query set in
 * `vectors`, into `best`. The kernel takes every row's dot product, allowed or not: that
 * costs less than skipping rows one by one would.
 */
function scan(vectors: Int8RowSet, partition: Partition, queryNormSquared: number, allowed: Uint8Array, best: TopK): void {
  const { rowids, codes, normsSquared, firstRow } = partition;
  const dots = vectors.dots(firstRow, rowids.length);
  for (let r = 0; r < rowids.length; r++) {
    if (allowed[codes[r]!] === 0) continue;
    best.offer(rowids[r]!, queryNormSquared + normsSquared[r]! - 2 * dots[r]!);
  }
}

/** The k smallest distances offered (ties: the row offered first), in typed arrays. */
class TopK {
  readonly #rowids: Float64Array;
  readonly #distances: Float64Array;
  #count = 0;
  #worst = 0;

  constructor(readonly k: number) {
    this.#rowids = new Float64Array(k);
    this.#distances = new Float64Array(k);
  }

  offer(rowid: number, distance: number): void {
    if (this.#count < this.k) {
      this.#rowids[this.#count] = rowid;
      this.#distances[this.#count++] = distance;
      if (this.#count === this.k) this.#findWorst();
      return;
    }
    if (distance >= this.#distances[this.#worst]!) return;
    this.#rowids[this.#worst] = rowid;
    this.#distances[this.#worst] = distance;
    this.#findWorst();
  }

  /** Appends the kept rows, nearest first, with vec0's L2 distance (the square root), and empties this. */
  drainInto(out: { rowid: number; distance: number }[]): void {
    const kept = Array.from({ length: this.#count }, (_, i) => ({ rowid: this.#rowids[i]!, distance: Math.sqrt(this.#distances[i]!) }));
    kept.sort((a, b) => a.distance - b.distance || a.rowid - b.rowid);
    out.push(...kept);
    this.#count = 0;
  }

  #findWorst(): void {
    let worst = 0;
    for (let i = 1; i < this.#count; i++) if (this.#distances[i]! > this.#distances[worst]!) worst = i;
    this.#worst = worst;
  }
}
