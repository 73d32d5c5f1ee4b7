package store

import (
	"context"
	"errors"
	"maps"
	"slices"

	"vitrine/schema/migrations"
)

// ErrInjected is the failure MigrateInterrupted injects.
var ErrInjected = errors.New("injected failure")

// MigrateInterrupted runs Migrate and fails it right after statement i (from 0) of the migration
// version, as a crash there would.
func (db *DB) MigrateInterrupted(ctx context.Context, version string, i int) error {
	files, err := migrations.Files()
	if err != nil {
		return err
	}
	return db.migrate(ctx, files, migrateOptions{afterStatement: func(v string, j int) error {
		if v == version && j == i {
			return ErrInjected
		}
		return nil
	}})
}

// UniqueConstraintNames lists the constraints whose violations have their own message.
func UniqueConstraintNames() []string { return slices.Sorted(maps.Keys(uniqueMessages)) }

// QueuedLogs is how many logs have a write queue (something holds or waits for it).
func (db *DB) QueuedLogs() int {
	db.queues.mu.Lock()
	defer db.queues.mu.Unlock()
	return len(db.queues.m)
}

// QueueWaiters is how many transactions wait for the write queue of a log (a tenant id).
func (db *DB) QueueWaiters(id string) int {
	db.queues.mu.Lock()
	defer db.queues.mu.Unlock()
	if q := db.queues.m[id]; q != nil {
		return q.refs - len(q.slot)
	}
	return 0
}

// ExecLater puts a write off to the transaction's last batch, as the admin handler's product
// update does (tests of group commit make one fail).
func (tx *Tx) ExecLater(sql string, args ...any) { tx.execLater(sql, args...) }

// Setting is the current value of a run-time setting in the transaction.
func (tx *Tx) Setting(ctx context.Context, name string) (string, error) {
	var v string
	err := tx.pg.QueryRow(ctx, `SELECT current_setting($1)`, name).Scan(&v)
	return v, err
}
