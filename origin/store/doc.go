// Package store is the origin's database layer and the only package that imports pgx. It runs on
// CockroachDB in production and PostgreSQL 15+ in development and tests, in the SQL subset they
// share.
//
// # Overview
//
// Every write runs in DB.Tx: one SERIALIZABLE transaction, retried whole (new BEGIN, new snapshot)
// on serialization failures and deadlocks with jittered exponential backoff, within a retry count
// and a time budget. When the budget runs out the caller gets a schema.CodeUnavailable error with a
// RetryAfter, which transports answer as 503 with Retry-After.
//
// A transaction that changes replicated entities records schema.Change values through Tx. At
// commit it takes consecutive versions of each log it touched (one small log_versions row per
// tenant, plus one for the platform registry), stamps them on the entities and the changes, and
// inserts the changes into the replication outbox, all in the same transaction. The relay
// publishes the outbox; nothing here talks to NATS.
//
// The transactions of one process that take the same store's log wait their turn in a write
// queue (queue.go), and a write of DB.TenantWriteTx holding the queue carries the writes that
// joined it in its own transaction, each from a savepoint (group commit): one COMMIT, one log
// bump and one relay round for up to 1+DefaultGroupWrites writes, each answered on its own.
//
// An application password verified against the database is trusted for Config.CredentialTTL
// without asking again (credcache.go); a change this process commits to a tenant's users or
// passwords forgets the tenant's entries before the call returns, and Config.OnCredentialsChange
// tells the other processes.
//
// # Invariants
//
//   - A transaction changing k entities of one log takes k consecutive versions of that log, and
//     versions of a log are taken in commit order (the log_versions row serialises writers).
//   - An entity row's version column equals the version of the last change recorded for it.
//   - Outbox rows are immutable; the relay deletes them only after the stream holds them.
//   - Functions passed to Tx have no effect outside the database: they may run several times,
//     and one passed to TenantWriteTx may run in another caller's goroutine and transaction.
//   - Errors leaving this package are *schema.Error values or wrap context cancellation; no pgx
//     error type or SQL text reaches a caller's response.
package store
