package relay_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"vitrine/origin/store"
	"vitrine/origin/store/storetest"
	"vitrine/schema"
	"vitrine/sync/natstest"
	"vitrine/sync/relay"
)

// TestRelayWriteCost counts the round trips and statements the relay sends to the database to
// publish one write (woken by the commit naming its log, as origins do, one write at a time: no
// batching of writes helps it), polling and lease renewals aside, and holds them to their budget.
func TestRelayWriteCost(t *testing.T) {
	ctx := context.Background()
	// No polling: every step is a wake-up; renewals are counted apart below.
	writer, rl, c := wokenRelay(t, store.Config{}, relay.Config{Poll: time.Hour, LeaseTTL: time.Minute})

	tn := storetest.Tenant(t, writer, "shop")
	var id schema.ProductID
	write := func(price int64) {
		t.Helper()
		before := rl.Stats().Events
		if _, err := writer.WriteTx(ctx, func(tx *store.Tx) error {
			if id == 0 {
				p := product("lamp")
				if err := tx.CreateProduct(ctx, tn, p); err != nil {
					return err
				}
				id = p.ID
				return nil
			}
			return patchPrice(ctx, tx, tn, id, price)
		}); err != nil {
			t.Fatal(err)
		}
		// The step has ended once the write's event is published too.
		waitFor(t, "the write's event", func() bool { return rl.Stats().Events > before })
		time.Sleep(2 * time.Millisecond)
	}
	for i := range 5 { // adoption, the first publishes, the statement caches
		write(int64(1000 + i))
	}
	const n = 20
	c.Reset()
	for i := range n {
		write(int64(2000 + i))
	}
	trips, stmts := c.Counts()
	texts := c.Texts()
	t.Logf("relay: %.1f round trips and %.1f statements per write (%d writes); the last write's:\n%s",
		float64(trips)/n, float64(stmts)/n, n, strings.Join(texts[len(texts)*(n-1)/n:], "\n"))
	// Before: 12 round trips and 12 statements (pending logs, outbox rows, slot versions, BEGIN,
	// SELECT 1, lease, digest, slots, outbox deletion, COMMIT, pending events, their deletion).
	// 11 statements: the settle's SET LOCAL bounding how long a frozen relay can keep the lease's
	// row locked (store.leaseIdleSQL) rides in its batch, costing no round trip.
	// Woken with the log's name (WakeLogs), the relay no longer reads the pending logs: 6 and 10.
	// The settle's BEGIN rides in its batch (store.txOpen), and no SELECT 1 goes with it: 5 and 10.
	if trips > 5*n || stmts > 10*n {
		t.Errorf("the relay takes %.1f round trips and %.1f statements per write; the budget is 5 and 10",
			float64(trips)/n, float64(stmts)/n)
	}
	for _, s := range texts {
		if strings.Contains(s, "FROM log_versions") {
			t.Errorf("a named wake-up read the pending logs: %s", s)
			break
		}
	}
}

// wokenRelay runs a relay until the test ends on a pool of its own (opened with pool, its
// statements counted by the Counter returned), over a database whose writer (returned) wakes it
// after each commit with the logs the commit took, as origins do.
func wokenRelay(t *testing.T, pool store.Config, cfg relay.Config) (*store.DB, *relay.Relay, *storetest.Counter) {
	t.Helper()
	ns := natstest.Run(t)
	var rl *relay.Relay
	writer, dsn := storetest.Open(t, store.Config{OnCommit: func(cs []store.LogCommit) {
		if rl != nil {
			names := make([]string, len(cs))
			for i, c := range cs {
				names[i] = c.Log
			}
			rl.WakeLogs(names)
		}
	}})
	c := &storetest.Counter{}
	pool.Tracer = c
	db, err := store.Open(context.Background(), dsn, pool)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	cfg.Logger = quietLogger()
	if rl, err = relay.New(db, ns.Connect(t), cfg); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { rl.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return writer, rl, c
}

func product(slug string) *schema.Product {
	return &schema.Product{Slug: slug, Title: "Product " + slug, Status: schema.ProductActive, Prices: schema.Prices{"USD": 1999}}
}

// BenchmarkReplicatedWrite measures the CPU one replicated write costs: a product price
// change as the origin's PATCH handler makes it, published by a relay (default polling, woken by
// the commit) before the next write starts. It reports the CPU of the PostgreSQL backends of the
// benchmark's database (from /proc: other databases' load on the server is not counted, nor
// the server's background processes) and of this process (writer, relay and nats-server), per
// write:
//
//	go test ./sync/relay -run '^$' -bench ReplicatedWrite -benchtime 400x
func BenchmarkReplicatedWrite(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := natstest.Run(b)
	var rl *relay.Relay
	writer, dsn := storetest.Open(b, store.Config{OnCommit: func([]store.LogCommit) {
		if rl != nil {
			rl.Wake()
		}
	}})
	db, err := store.Open(ctx, dsn, store.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	rl, err = relay.New(db, ns.Connect(b), relay.Config{Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() { rl.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	tn := storetest.Tenant(b, writer, "shop")
	var id schema.ProductID
	if _, err := writer.WriteTx(ctx, func(tx *store.Tx) error {
		p := product("lamp")
		if err := tx.CreateProduct(ctx, tn, p); err != nil {
			return err
		}
		id = p.ID
		return tx.CreateVariant(ctx, tn, &store.StockedVariant{Variant: schema.Variant{ProductID: p.ID, SKU: "LAMP"}, Stock: 5})
	}); err != nil {
		b.Fatal(err)
	}
	write := func(price int64) {
		before := rl.Stats().Events
		if _, err := writer.WriteTx(ctx, func(tx *store.Tx) error { return patchPrice(ctx, tx, tn, id, price) }); err != nil {
			b.Fatal(err)
		}
		for rl.Stats().Events <= before {
			time.Sleep(100 * time.Microsecond)
		}
	}
	for i := range 10 {
		write(int64(1000 + i))
	}
	pg, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer pg.Close(ctx)
	backends := func() map[int]float64 {
		out := map[int]float64{}
		rows, err := pg.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)
		if err != nil {
			b.Fatal(err)
		}
		pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
		if err != nil {
			b.Fatal(err)
		}
		for _, pid := range pids {
			out[int(pid)] = procCPU(b, strconv.Itoa(int(pid)), false)
			out[-int(pid)] = procCPU(b, strconv.Itoa(int(pid)), true)
		}
		return out
	}
	db0, self0 := backends(), procCPU(b, "self", false)
	b.ResetTimer()
	for i := range b.N {
		write(int64(2000 + i%1000))
	}
	b.StopTimer()
	db1, self1 := backends(), procCPU(b, "self", false)
	var dbSec, dbSys float64
	for pid, s := range db1 {
		if pid < 0 {
			dbSys += s - db0[pid]
		} else {
			dbSec += s - db0[pid] // a backend opened meanwhile counts whole
		}
	}
	b.ReportMetric(dbSec*1000/float64(b.N), "db-cpu-ms/write")
	b.ReportMetric(dbSys*1000/float64(b.N), "db-sys-ms/write")
	b.ReportMetric((self1-self0)*1000/float64(b.N), "proc-cpu-ms/write")
}

// procCPU returns the user and system CPU seconds of a process (/proc/<pid>/stat, clock ticks
// of 10 ms), or its system CPU only.
func procCPU(b *testing.B, pid string, sysOnly bool) float64 {
	raw, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0 // the backend ended
	}
	s := string(raw)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	if sysOnly {
		return stime / 100
	}
	return (utime + stime) / 100
}

// patchPrice changes a product's price as origin's PATCH handler does.
func patchPrice(ctx context.Context, tx *store.Tx, tn *schema.Tenant, id schema.ProductID, price int64) error {
	old, vs, err := tx.ProductForUpdate(ctx, tn, id)
	if err != nil {
		return err
	}
	p := *old
	p.Prices = schema.Prices{"USD": price}
	return tx.UpdateProductVariants(ctx, tn, old, &p, vs)
}
