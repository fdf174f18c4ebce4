/**
 * The one rewrite a ported store's SQL gets on its way to PostgreSQL: SQLite's parameters
 * (`?` in order, `?NNN` by number) become `$n`. Quoted strings, quoted names and comments
 * pass through untouched. Everything else must already be SQL both engines run; a statement
 * that differs is chosen explicitly by the store (sql-database.ts: forUpdate, isPostgres).
 */
export class SqlTranslationError extends Error {
  override name = "SqlTranslationError";
}

/** Parameters one statement may name (PostgreSQL's own limit is 65,535). */
const PARAMETERS_MAX = 32_767;

export function toPostgresSql(sql: string): string {
  let out = "";
  let next = 1;
  let numbered = false;
  let positional = false;
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    const skipTo = skipQuotedOrComment(sql, i);
    if (skipTo > i) {
      out += sql.slice(i, skipTo);
      i = skipTo;
      continue;
    }
    if (c !== "?") {
      out += c;
      i++;
      continue;
    }
    let j = i + 1;
    while (j < sql.length && sql[j]! >= "0" && sql[j]! <= "9") j++;
    if (j > i + 1) {
      const n = Number(sql.slice(i + 1, j));
      if (n < 1 || n > PARAMETERS_MAX) throw new SqlTranslationError(`parameter ?${n} is out of range`);
      numbered = true;
      out += `$${n}`;
    } else {
      positional = true;
      if (next > PARAMETERS_MAX) throw new SqlTranslationError(`more than ${PARAMETERS_MAX} parameters`);
      out += `$${next++}`;
    }
    if (numbered && positional) throw new SqlTranslationError("a statement mixes ? and ?NNN parameters");
    i = j;
  }
  return out;
}

/** The index just past a quoted string, quoted name or comment starting at i; i itself when none starts there. */
function skipQuotedOrComment(sql: string, i: number): number {
  const c = sql[i]!;
  if (c === "'" || c === '"') {
    let j = i + 1;
    while (j < sql.length) {
      if (sql[j] === c) {
        if (sql[j + 1] === c) j += 2;
        else return j + 1;
      } else j++;
    }
    throw new SqlTranslationError("unterminated quote");
  }
  if (c === "-" && sql[i + 1] === "-") {
    const end = sql.indexOf("\n", i);
    return end === -1 ? sql.length : end + 1;
  }
  if (c === "/" && sql[i + 1] === "*") {
    const end = sql.indexOf("*/", i + 2);
    if (end === -1) throw new SqlTranslationError("unterminated comment");
    return end + 2;
  }
  return i;
}
