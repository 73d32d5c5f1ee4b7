// Package bareorigin is the freshness scenario's bare origin: the least a write path's origin
// does for a write (an HTTP request, one durable transaction with an outbox row through pgx),
// with nothing of Vitrine's in it, so that the bench can measure its CPU as a floor beside the
// real origin's.
//
// It is the one package besides the origin's store that imports pgx: what it measures is a pgx
// transaction without the store around it. Nothing else imports it but the command that runs it.
package bareorigin

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/valyala/fasthttp"
)

// bareRows is the number of rows of the bare write's table (the freshness scenario's store has
// as many products).
const bareRows = 10000

// Serve runs the bare origin: a fasthttp server on addr whose every
// request runs the least a durable write with an outbox does, on the PostgreSQL database at
// databaseURL, and answers body with status 200. That write is a SERIALIZABLE transaction in one
// round trip (pgx, one batch): update one of 10,000 rows, bump a log row, insert an outbox row
// holding body. One log's transactions take turns, as the origin's per-log queue makes them. It
// creates its tables (bench_floor_*) before it listens, and serves until ctx ends.
// `vitrine bench-bare-origin` runs it as a child process of `vitrine bench`.
func Serve(ctx context.Context, addr, databaseURL string, body []byte) error {
	db, err := pgxpool.New(ctx, databaseURL)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, q := range []string{
		`CREATE TABLE IF NOT EXISTS bench_floor_rows (id int PRIMARY KEY, price bigint NOT NULL, title text NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS bench_floor_log (id int PRIMARY KEY, version bigint NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS bench_floor_outbox (version bigint PRIMARY KEY, change bytea NOT NULL)`,
		`INSERT INTO bench_floor_rows SELECT g, 100, 'Product ' || g FROM generate_series(1, ` + strconv.Itoa(bareRows) + `) g ON CONFLICT DO NOTHING`,
		`INSERT INTO bench_floor_log VALUES (1, 0) ON CONFLICT DO NOTHING`,
	} {
		if _, err := db.Exec(ctx, q); err != nil {
			return fmt.Errorf("bare origin: %w", err)
		}
	}
	var version int64
	if err := db.QueryRow(ctx, `SELECT version FROM bench_floor_log WHERE id = 1`).Scan(&version); err != nil {
		return fmt.Errorf("bare origin: %w", err)
	}
	var logTurn sync.Mutex // guards version
	write := func(ctx context.Context) error {
		logTurn.Lock()
		defer logTurn.Unlock()
		version++
		v := version
		b := &pgx.Batch{}
		b.Queue(`BEGIN ISOLATION LEVEL SERIALIZABLE`)
		b.Queue(`UPDATE bench_floor_rows SET price = $1 WHERE id = $2`, v, 1+v%bareRows)
		b.Queue(`UPDATE bench_floor_log SET version = $1 WHERE id = 1`, v)
		b.Queue(`INSERT INTO bench_floor_outbox VALUES ($1, $2)`, v, body)
		b.Queue(`COMMIT`)
		return db.SendBatch(ctx, b).Close()
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &fasthttp.Server{Handler: func(c *fasthttp.RequestCtx) {
		if err := write(c); err != nil {
			c.Error(err.Error(), fasthttp.StatusInternalServerError)
			return
		}
		c.SetContentType("application/json")
		c.SetBody(body)
	}}
	go func() {
		<-ctx.Done()
		srv.Shutdown()
	}()
	return srv.Serve(ln)
}
