/**
 * How far two dumps of search-replies.ts differ, per scope: replies identical, and the mean
 * share of each reply's top 10 the other reply also holds, by passage (where it sits and
 * what it says) and by provision (where it sits: the 100k corpus holds recombined copies of
 * the same provisions, often at tied scores), with the questions whose replies moved most.
 *
 *   bun scripts/bench/search-replies-diff.ts before.jsonl after.jsonl
 */
import { readFileSync } from "node:fs";

interface Reply {
  id: string;
  scope: string;
  results: { source?: string; citationPath?: string; content: string }[];
}

const [beforeFile, afterFile] = process.argv.slice(2);
if (beforeFile === undefined || afterFile === undefined) throw new Error("usage: search-replies-diff.ts before.jsonl after.jsonl");
const read = (file: string) =>
  new Map(
    readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((line) => {
        const { scope, id } = JSON.parse(line) as Reply;
        return [`${scope} ${id}`, line] as const;
      }),
  );
const passage = (r: Reply["results"][number]) => JSON.stringify([r.source, r.citationPath, r.content]);
// corpus.ts marks each recombined copy "[bench N]"; folded copies list several.
const provision = (r: Reply["results"][number]) => JSON.stringify([r.source, r.citationPath?.replace(/ \[bench \d+\]/g, "")]);

/** Share of `a`'s items `b` also holds, counting repeats (a multiset intersection). */
function overlap(a: string[], b: string[]): number {
  if (a.length === 0) return 1;
  const left = new Map<string, number>();
  for (const x of b) left.set(x, (left.get(x) ?? 0) + 1);
  let shared = 0;
  for (const x of a) {
    const n = left.get(x) ?? 0;
    if (n > 0) (shared++, left.set(x, n - 1));
  }
  return shared / a.length;
}

interface Figures {
  replies: number;
  identical: number;
  passages: number;
  provisions: number;
  moved: [number, string][];
}

const before = read(beforeFile);
const after = read(afterFile);
const byScope = new Map<string, Figures>();
for (const [key, line] of before) {
  const other = after.get(key);
  if (other === undefined) throw new Error(`${key} is missing from ${afterFile}`);
  const [scope, id] = key.split(" ") as [string, string];
  const f = byScope.get(scope) ?? { replies: 0, identical: 0, passages: 0, provisions: 0, moved: [] };
  byScope.set(scope, f);
  const a = (JSON.parse(line) as Reply).results;
  const b = (JSON.parse(other) as Reply).results;
  const byProvision = overlap(a.map(provision), b.map(provision));
  f.replies++;
  f.identical += line === other ? 1 : 0;
  f.passages += overlap(a.map(passage), b.map(passage));
  f.provisions += byProvision;
  f.moved.push([byProvision, id]);
}
const percent = (x: number) => `${(x * 100).toFixed(1)}%`;
for (const [scope, f] of byScope) {
  const least = f.moved.sort((x, y) => x[0] - y[0]).slice(0, 3).map(([s, id]) => `${id} ${percent(s)}`);
  console.log(
    `${scope}: ${f.identical}/${f.replies} identical; top-10 overlap by passage ${percent(f.passages / f.replies)}, by provision ${percent(f.provisions / f.replies)} (least: ${least.join(", ")})`,
  );
}
