-- The provision's own title ("Right to erasure ('right to be forgotten')"), shown as
-- SearchMatch.title; '' when it has none (uploaded PDFs, passages imported without one).
ALTER TABLE search_chunks ADD COLUMN title TEXT NOT NULL DEFAULT '' CHECK (length(title) <= 1000);

-- Per-term passage counts of the BM25 index, read by the ranker for its own BM25F over
-- candidate passages (src/search/rank/statistics.ts).
CREATE VIRTUAL TABLE search_fts_vocab USING fts5vocab(search_fts, row);
