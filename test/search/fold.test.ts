import { expect, test } from "bun:test";
import { foldRanking, type FoldablePassage } from "../../src/search/rank/fold";

const passage = (chunkId: number, citationPath: string, position: number, cited = false): FoldablePassage => ({
  chunkId,
  documentId: citationPath.split(" ")[0]!,
  position,
  citationPath,
  content: `text ${chunkId}`,
  cited,
});
const fold = (ranked: FoldablePassage[], limit = 10) => foldRanking(ranked, limit, { siblingGap: 2, deferBy: 1 });

test("neighbouring passages of one provision fold into one match: the best first, then document order", () => {
  const matches = fold([passage(1, "GDPR > Article 33 (Notification) > 3–5", 2), passage(2, "GDPR > Article 34 (Communication) > 1–3", 5), passage(3, "GDPR > Article 33 (Notification) > 1–2", 1)]);
  expect(matches.map((m) => m.citationPath)).toEqual(["GDPR > Article 33 (Notification) > 3–5, 1–2", "GDPR > Article 34 (Communication) > 1–3"]);
  expect(matches[0]!.content).toBe("text 1\n\ntext 3");
  expect(matches[0]!.passages.map((p) => p.chunkId)).toEqual([1, 3]);
});

test("a sibling far down the ranking is not promoted into the fold", () => {
  const ranked = [passage(1, "GDPR > Article 33 (Notification) > 1–2", 1), ...[2, 3, 4].map((i) => passage(i, `GDPR > Article ${40 + i} (Title) > 1`, 10 * i)), passage(5, "GDPR > Article 33 (Notification) > 3–5", 2)];
  expect(fold(ranked).map((m) => m.citationPath)[0]).toBe("GDPR > Article 33 (Notification) > 1–2");
});

test("whole articles are not siblings: only subdivisions of one provision fold", () => {
  const matches = fold([passage(1, "GDPR > Article 50", 50), passage(2, "GDPR > Article 48", 48), passage(3, "12 CFR 1003.4 (Compilation) > (b)–(c)", 3), passage(4, "12 CFR 1003.4 (Compilation) > (d)", 4)]);
  expect(matches.map((m) => m.citationPath)).toEqual(["GDPR > Article 50", "GDPR > Article 48", "12 CFR 1003.4 (Compilation) > (b)–(c), (d)"]);
});

test("a further passage of a provision already shown moves down behind the next provision", () => {
  const matches = fold([passage(1, "GDPR > Article 47 (Rules) > 1–2", 1), passage(2, "GDPR > Article 47 (Rules) > 2 > (g)–(l)", 3), passage(3, "GDPR > Article 46 (Transfers) > 1–2", 0)]);
  expect(matches.map((m) => m.citationPath)).toEqual(["GDPR > Article 47 (Rules) > 1–2", "GDPR > Article 46 (Transfers) > 1–2", "GDPR > Article 47 (Rules) > 2 > (g)–(l)"]);
});

test("a provision the query cites is never folded, and at most three passages fold together", () => {
  const cited = fold([passage(1, "GDPR > Article 33 (Notification) > 1–2", 1, true), passage(2, "GDPR > Article 33 (Notification) > 3–5", 2, true)]);
  expect(cited.map((m) => m.citationPath)).toEqual(["GDPR > Article 33 (Notification) > 1–2", "GDPR > Article 33 (Notification) > 3–5"]);
  const many = fold([1, 2, 3, 4].map((i) => passage(i, `N.Y. Law § 1 (Notice) > ${i}`, i)));
  expect(many[0]!.passages).toHaveLength(3);
});
