// Imported as text so migrations travel inside the compiled binary. Append only:
// a landed migration is never edited; a change is a new numbered file.
import m001 from "./001_foundation.sql" with { type: "text" };
import m004 from "./004_jobs.sql" with { type: "text" };

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const migrations: Migration[] = [
  { version: 1, name: "001_foundation", sql: m001 },
  { version: 4, name: "004_jobs", sql: m004 },
];
