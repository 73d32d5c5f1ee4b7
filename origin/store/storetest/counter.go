package storetest

import (
	"context"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
)

// Counter is a pgx tracer (store.Config.Tracer) that counts the round trips and statements a
// pool sends: a Query, QueryRow or Exec is one round trip, a batch is one round trip for all of
// its statements, and a simple query holding several statements (BEGIN …; SELECT 1) counts
// each. It keeps the texts in order until Reset, for a test to print.
type Counter struct {
	mu         sync.Mutex
	roundTrips int
	statements int
	texts      []string
}

// Counts returns the round trips and statements since the last Reset.
func (c *Counter) Counts() (roundTrips, statements int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.roundTrips, c.statements
}

// Texts returns the statements since the last Reset, in the order they were sent; a batch's
// statements are prefixed with "batch: ".
func (c *Counter) Texts() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.texts...)
}

// Reset starts counting again.
func (c *Counter) Reset() {
	c.mu.Lock()
	c.roundTrips, c.statements, c.texts = 0, 0, nil
	c.mu.Unlock()
}

// statementsIn counts the statements of a text: its non-empty parts between semicolons (the
// store's texts hold no semicolon in a literal).
func statementsIn(sql string) int {
	n := 0
	for _, part := range strings.Split(sql, ";") {
		if strings.TrimSpace(part) != "" {
			n++
		}
	}
	return max(n, 1)
}

func oneLine(sql string) string { return strings.Join(strings.Fields(sql), " ") }

// TraceQueryStart counts a statement sent on its own.
func (c *Counter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	c.mu.Lock()
	c.roundTrips++
	c.statements += statementsIn(data.SQL)
	c.texts = append(c.texts, oneLine(data.SQL))
	c.mu.Unlock()
	return ctx
}

// TraceQueryEnd does nothing.
func (c *Counter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TraceBatchStart counts the batch's round trip.
func (c *Counter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.mu.Lock()
	c.roundTrips++
	c.mu.Unlock()
	return ctx
}

// TraceBatchQuery counts a statement of a batch.
func (c *Counter) TraceBatchQuery(_ context.Context, _ *pgx.Conn, data pgx.TraceBatchQueryData) {
	c.mu.Lock()
	c.statements += statementsIn(data.SQL)
	c.texts = append(c.texts, "batch: "+oneLine(data.SQL))
	c.mu.Unlock()
}

// TraceBatchEnd does nothing.
func (c *Counter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}
