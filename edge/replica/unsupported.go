package replica

import (
	"sort"
	"sync"
	"time"
)

// UnsupportedLog is a log of which the follower skipped changes written in a change schema newer
// than this build reads (schema.ChangeSchemaVersion): a writer was upgraded before this reader.
// The log's state stays at the last version this replica could read, and keeps being served.
type UnsupportedLog struct {
	// Log is the tenant slug, or schema.PlatformLog; "" when the message did not say.
	Log string `json:"log"`
	// Schema is the newest schema seen on the log.
	Schema int `json:"schema"`
	// Skipped counts the log's changes skipped.
	Skipped uint64 `json:"skipped"`
	// Last is when the last one arrived.
	Last time.Time `json:"last_seen"`
}

// unsupportedLogs records the logs of skipped newer-schema changes since the replica started.
// Written by the follower goroutine, read by /readyz.
type unsupportedLogs struct {
	mu   sync.Mutex
	logs map[string]*UnsupportedLog
}

// Unsupported records that the follower skipped a change of log written in schema version
// schemaVersion, newer than this build reads (feed.UnsupportedSink). Nothing of it is applied:
// the log keeps its last readable state, and its head of that schema is not applied either.
func (r *Replica) Unsupported(log string, schemaVersion int) {
	u := &r.unsupported
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.logs == nil {
		u.logs = map[string]*UnsupportedLog{}
	}
	e := u.logs[log]
	if e == nil {
		e = &UnsupportedLog{Log: log}
		u.logs[log] = e
	}
	e.Schema = max(e.Schema, schemaVersion)
	e.Skipped++
	e.Last = time.Now().UTC()
}

// UnsupportedLogs returns the logs of which changes of a newer schema were skipped since the
// replica started, by log name (empty, never nil, when there are none). Safe for concurrent use.
func (r *Replica) UnsupportedLogs() []UnsupportedLog {
	u := &r.unsupported
	u.mu.Lock()
	out := make([]UnsupportedLog, 0, len(u.logs))
	for _, e := range u.logs {
		out = append(out, *e)
	}
	u.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Log < out[j].Log })
	return out
}
