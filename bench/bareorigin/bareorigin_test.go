package bareorigin

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/valyala/fasthttp"

	"vitrine/origin/store/storetest"
)

// Concurrent writes each commit one transaction: the log counts them all, the outbox holds one
// row per write with the body, and every answer is the body; a second server on the same
// database carries on from the log's version.
func TestServeWritesOneTransactionPerRequest(t *testing.T) {
	dsn := storetest.NewDatabase(t)
	body := []byte(`{"id":1,"price":1299}`)
	serve := func() (string, context.CancelFunc, <-chan error) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- Serve(ctx, addr, dsn, body) }()
		for deadline := time.Now().Add(30 * time.Second); ; {
			if c, err := net.Dial("tcp", addr); err == nil {
				c.Close()
				return addr, cancel, done
			}
			if time.Now().After(deadline) {
				t.Fatal("the bare origin did not listen within 30 s")
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	write := func(addr string, n int) {
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				status, got, err := fasthttp.Post(nil, "http://"+addr+"/api/admin/products/1", nil)
				if err != nil || status != 200 || string(got) != string(body) {
					t.Errorf("write: %d %q %v", status, got, err)
				}
			})
		}
		wg.Wait()
	}
	check := func(want int64) {
		conn, err := pgx.Connect(t.Context(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		var version, rows, bad int64
		if err := conn.QueryRow(t.Context(), `SELECT (SELECT version FROM bench_floor_log WHERE id = 1),
			(SELECT count(*) FROM bench_floor_outbox), (SELECT count(*) FROM bench_floor_outbox WHERE change <> $1)`, body).Scan(&version, &rows, &bad); err != nil {
			t.Fatal(err)
		}
		if version != want || rows != want || bad != 0 {
			t.Errorf("log version %d, outbox rows %d (%d not the body), want %d and %d", version, rows, bad, want, want)
		}
	}

	addr, stop, done := serve()
	write(addr, 16)
	check(16)
	stop()
	if err := <-done; err != nil {
		t.Errorf("Serve after its context ended: %v", err)
	}
	addr, stop, done = serve()
	write(addr, 4)
	check(20)
	stop()
	<-done
}
