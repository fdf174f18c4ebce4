-- Nothing for SQLite: PostgreSQL's 013 notifies the nodes' search replicas when passage
-- changes commit. A single node indexes its own passages and has no change log to follow;
-- this file keeps the numbers of both engines aligned.
SELECT 1;
