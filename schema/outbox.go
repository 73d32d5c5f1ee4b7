package schema

import "time"

// This file holds the shapes the origin's store hands to the relay: the contract between the
// database side of the replication outbox and its publisher.

// LogRef names a replication log and where its subjects live.
type LogRef struct {
	// ID is the log's database key: a tenant id, or the nil UUID for the platform log.
	ID string
	// Name is the tenant slug, or PlatformLog.
	Name  string
	Shard int
	// Version is the log's current version, when the caller asked for it.
	Version int64
}

// OutboxRow is one row of the replication outbox: an encoded Change and the fields the relay
// needs without decoding it.
type OutboxRow struct {
	Version  int64
	TxnFirst int64
	TxnLast  int64
	// Key is the change's subject below its log (Change.Key).
	Key     string
	Body    []byte
	Deleted bool
	// CreatedAt is the commit time of the row's transaction (for the relay's publish lag).
	CreatedAt time.Time
}

// EventRow is one row of the event outbox.
type EventRow struct {
	ID string
	// Tenant is the store's slug (a subject token), TenantID its id.
	Tenant   string
	TenantID string
	Kind     string
	Payload  []byte
	// Created is when the transaction that caused the event ran.
	Created time.Time
}
