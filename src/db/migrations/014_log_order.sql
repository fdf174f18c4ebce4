-- Nothing for SQLite: PostgreSQL's 014 numbers ledger entries in the order they were written
-- (SQLite's rowid already does) and keeps only each passage's latest change in the log the
-- nodes' replicas follow (a single node has no such log). This file keeps the numbers of
-- both engines aligned.
SELECT 1;
