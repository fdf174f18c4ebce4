// Imported as text so migrations travel inside the compiled binary. Append only:
// a landed migration is never edited; a change is a new numbered file.
import m001 from "./001_foundation.sql" with { type: "text" };
import m002 from "./002_ledger.sql" with { type: "text" };
import m003 from "./003_search.sql" with { type: "text" };
import m004 from "./004_jobs.sql" with { type: "text" };
import m005 from "./005_documents.sql" with { type: "text" };
import m007 from "./007_dashboard.sql" with { type: "text" };
import m008 from "./008_search_titles.sql" with { type: "text" };
import m010 from "./010_run_fairness.sql" with { type: "text" };
import m011 from "./011_ledger_purpose.sql" with { type: "text" };
import m012 from "./012_search_cluster_jurisdictions.sql" with { type: "text" };
import m013 from "./013_passage_change_notify.sql" with { type: "text" };
import m014 from "./014_log_order.sql" with { type: "text" };

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const migrations: Migration[] = [
  { version: 1, name: "001_foundation", sql: m001 },
  { version: 2, name: "002_ledger", sql: m002 },
  { version: 3, name: "003_search", sql: m003 },
  { version: 4, name: "004_jobs", sql: m004 },
  { version: 5, name: "005_documents", sql: m005 },
  { version: 7, name: "007_dashboard", sql: m007 },
  { version: 8, name: "008_search_titles", sql: m008 },
  { version: 10, name: "010_run_fairness", sql: m010 },
  { version: 11, name: "011_ledger_purpose", sql: m011 },
  { version: 12, name: "012_search_cluster_jurisdictions", sql: m012 },
  { version: 13, name: "013_passage_change_notify", sql: m013 },
  { version: 14, name: "014_log_order", sql: m014 },
];
