-- The relay's record of what the state stream holds for each log it has adopted: the live entity
-- states it published (a tombstone removes its row) and the log's digest over them, settled
-- through a version. The relay stamps the digest on every head marker it publishes so that
-- replicas can check "at version N" instead of assuming it. Written by the relay only, after the
-- stream acknowledged what it describes.
CREATE TABLE IF NOT EXISTS repl_slots (
    log_id  UUID NOT NULL,
    key     TEXT NOT NULL,   -- "<pub|priv>.<kind>.<id>"
    version INT8 NOT NULL,
    PRIMARY KEY (log_id, key)
);

CREATE TABLE IF NOT EXISTS repl_digests (
    log_id     UUID PRIMARY KEY,
    version    INT8 NOT NULL,  -- the log version the digest is settled through
    pub_count  INT8 NOT NULL,
    pub_sum    INT8 NOT NULL,  -- uint64 sums stored as their two's-complement INT8
    priv_count INT8 NOT NULL,
    priv_sum   INT8 NOT NULL
);
