package store

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// This file is the package's one way of reading a query's rows: every multi-row read goes
// through eachRow or appendRows, which run the query, close the rows on every path and return
// the iteration's error (rows.Err). Errors come back unwrapped; DB methods map them (mapError)
// at the package boundary as before.

// querier runs a query: the pool (DB.pool), a transaction (Tx.pg) or a bare pgx.Tx. pool and
// txConn detach the caller's context (see pool.go).
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// eachRow runs sql with args on q and calls fn with each row in turn. It stops at the first
// error, fn's or the query's, and returns it; the rows are closed when it returns, so fn may not
// keep the row, and the caller may issue the next statement on the same transaction at once.
func eachRow(ctx context.Context, q querier, sql string, fn func(row pgx.Row) error, args ...any) error {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// appendRows runs sql with args on q and appends to dst the value scan makes of each row, in the
// rows' order (pgx.AppendRows). Pass a nil dst for a nil result when no row matches, or an empty
// slice for an empty one (a JSON []). On any error it returns nil and the error.
func appendRows[T any](ctx context.Context, q querier, dst []T, sql string, scan func(row pgx.Row) (T, error), args ...any) ([]T, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.AppendRows(dst, rows, func(row pgx.CollectableRow) (T, error) { return scan(row) })
}
