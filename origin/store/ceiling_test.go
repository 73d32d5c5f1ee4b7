package store_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"vitrine/origin/store"
	"vitrine/origin/store/storetest"
	"vitrine/schema"
)

// BenchmarkTenantWriteCeiling measures replicated writes per second on one tenant (every write
// of a tenant takes versions from the tenant's log row, so a tenant's writes serialise) and
// spread over several tenants, with concurrent writers, under the default retry budget, in three
// modes compared in the same run: queue=off, each write in its own transaction colliding in the
// database (the baseline); queue=on, the process's write queues (queue.go) through WriteTx;
// queue=group, the origin's path (TenantWriteTx and the admin handler's ProductForUpdate and
// UpdateProductVariants), where the holder of a store's queue carries the writes that joined it
// in its transaction (group commit). refused/write counts the writes answered 503 because their
// retries ran out; tx/write the transactions committed per write. Run with:
//
//	go test ./origin/store -run '^$' -bench TenantWriteCeiling -benchtime 3s
func BenchmarkTenantWriteCeiling(b *testing.B) {
	for _, tc := range []struct {
		tenants, writers int
		queue            string
	}{{1, 1, "off"}, {1, 1, "group"}, {1, 4, "off"}, {1, 4, "on"}, {1, 4, "group"}, {1, 16, "off"}, {1, 16, "on"}, {1, 16, "group"},
		{1, 64, "off"}, {1, 64, "on"}, {1, 64, "group"}, {4, 16, "off"}, {4, 16, "on"}, {4, 16, "group"}} {
		b.Run(fmt.Sprintf("tenants=%d/writers=%d/queue=%s", tc.tenants, tc.writers, tc.queue), func(b *testing.B) {
			ctx := context.Background()
			retries, refused, commits := atomic.Int64{}, atomic.Int64{}, atomic.Int64{}
			cfg := store.Config{MaxConns: 32, OnRetry: func() { retries.Add(1) }, OnCommit: func([]store.LogCommit) { commits.Add(1) }}
			if tc.queue == "off" {
				cfg.QueueDepth = -1
			}
			db, _ := storetest.Open(b, cfg)
			type target struct {
				t  *schema.Tenant
				id schema.ProductID
			}
			var targets []target
			for i := 0; i < tc.tenants; i++ {
				tn := storetest.Tenant(b, db, fmt.Sprintf("t%d", i))
				for w := 0; w < tc.writers; w++ {
					p := &schema.Product{Slug: fmt.Sprintf("p%d", w), Title: "P", Status: schema.ProductActive, Prices: schema.Prices{"USD": 1}}
					if err := db.Tx(ctx, func(tx *store.Tx) error { return tx.CreateProduct(ctx, tn, p) }); err != nil {
						b.Fatal(err)
					}
					targets = append(targets, target{tn, p.ID})
				}
			}
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for w := 0; w < tc.writers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					tg := targets[w%len(targets)]
					if tc.tenants > 1 {
						tg = targets[(w%tc.tenants)*tc.writers+w]
					}
					for next.Add(1) <= int64(b.N) {
						var err error
						if tc.queue == "group" {
							_, err = db.TenantWriteTx(ctx, tg.t, func(tx *store.Tx) error { return handlerBumpIn(ctx, tx, tg.t, tg.id) })
						} else {
							_, err = db.WriteTx(ctx, func(tx *store.Tx) error { return bumpIn(ctx, tx, tg.t, tg.id) })
						}
						if schema.ErrorCode(err) == schema.CodeUnavailable {
							refused.Add(1) // the retry budget ran out: a 503
						} else if err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			el := time.Since(start)
			b.ReportMetric(float64(b.N)/el.Seconds(), "writes/s")
			b.ReportMetric(float64(retries.Load())/float64(b.N), "retries/write")
			b.ReportMetric(float64(refused.Load())/float64(b.N), "refused/write")
			b.ReportMetric(float64(commits.Load())/float64(b.N), "tx/write")
		})
	}
}
