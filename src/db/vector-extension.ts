import type { Database } from "bun:sqlite";
import vec0Path from "../../node_modules/sqlite-vec-linux-x64/vec0.so" with { type: "file" };
import { materialise } from "../platform/assets";

/**
 * sqlite-vec ships as a shared library; dlopen needs a real file, so copy it out once.
 * The file must stay named vec0.so: SQLite derives the entry point from the name.
 */
export async function loadVectorExtension(db: Database, cacheDir: string): Promise<void> {
  db.loadExtension(await materialise(vec0Path, cacheDir, "sqlite-vec-0.1.9/vec0.so"));
}
