package store

import "time"

// observeTx reports a transaction that started at start to Config.OnTx.
func (db *DB) observeTx(start time.Time) { db.cfg.OnTx(time.Since(start)) }

// PoolStats is a snapshot of the connection pool, for gauges.
type PoolStats struct {
	// Acquired, Idle and Total are the connections in use, idle, and open; Max is the pool's
	// bound.
	Acquired, Idle, Total, Max int32
	// Acquires counts successful acquisitions; EmptyAcquires those that had to wait for a
	// connection; Canceled those whose context ended while waiting.
	Acquires, EmptyAcquires, Canceled int64
	// AcquireWait is the total time spent waiting for connections.
	AcquireWait time.Duration
}

// PoolStats returns the connection pool's statistics. Safe for concurrent use.
func (db *DB) PoolStats() PoolStats {
	st := db.pool.p.Stat()
	return PoolStats{Acquired: st.AcquiredConns(), Idle: st.IdleConns(), Total: st.TotalConns(), Max: st.MaxConns(),
		Acquires: st.AcquireCount(), EmptyAcquires: st.EmptyAcquireCount(), Canceled: st.CanceledAcquireCount(),
		AcquireWait: st.AcquireDuration()}
}
