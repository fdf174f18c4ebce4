-- Which inverted-file clusters hold shared vectors of which jurisdiction (clusters follow
-- jurisdictions closely: about 4 per cluster over a 100k corpus), so a vector search with a
-- jurisdiction filter probes only clusters that can hold its rows. A superset: a vector
-- deleted later leaves its pair behind, which costs a probe, never a missed row.
CREATE TABLE search_ivf_cluster_jurisdictions (
  jurisdiction TEXT NOT NULL,
  cluster INTEGER NOT NULL,
  PRIMARY KEY (jurisdiction, cluster)
) WITHOUT ROWID;
