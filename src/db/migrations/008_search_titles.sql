-- The provision's own title ("Right to erasure ('right to be forgotten')"), shown as
-- SearchMatch.title; '' when it has none (uploaded PDFs, passages imported without one).
ALTER TABLE search_chunks ADD COLUMN title TEXT NOT NULL DEFAULT '' CHECK (length(title) <= 1000);

