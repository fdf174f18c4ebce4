-- PostgreSQL twin of src/db/migrations/008_search_titles.sql: the provision's own title
-- ("Right to erasure ('right to be forgotten')"), shown as SearchMatch.title; '' when it has none.
ALTER TABLE search_chunks ADD COLUMN title TEXT NOT NULL DEFAULT '' CHECK (length(title) <= 1000);
