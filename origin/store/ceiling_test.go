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
// spread over several tenants, with concurrent writers, with the process's write queues
// (queue.go) and without them (the baseline, in the same run), under the default retry budget:
// refused/write counts the writes answered 503 because their retries ran out. Run with:
//
//	go test ./origin/store -run '^$' -bench TenantWriteCeiling -benchtime 3s
func BenchmarkTenantWriteCeiling(b *testing.B) {
	for _, tc := range []struct {
		tenants, writers int
		queue            bool
	}{{1, 1, false}, {1, 4, false}, {1, 4, true}, {1, 16, false}, {1, 16, true}, {1, 64, false}, {1, 64, true}, {4, 16, false}, {4, 16, true}} {
		name := map[bool]string{false: "off", true: "on"}[tc.queue]
		b.Run(fmt.Sprintf("tenants=%d/writers=%d/queue=%s", tc.tenants, tc.writers, name), func(b *testing.B) {
			ctx := context.Background()
			retries, refused := atomic.Int64{}, atomic.Int64{}
			cfg := store.Config{MaxConns: 32, OnRetry: func() { retries.Add(1) }}
			if !tc.queue {
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
						_, err := db.WriteTx(ctx, func(tx *store.Tx) error {
							old, err := tx.Product(ctx, tg.t, tg.id)
							if err != nil {
								return err
							}
							p := *old
							p.Prices = schema.Prices{"USD": old.Prices["USD"] + 1}
							return tx.UpdateProduct(ctx, tg.t, old, &p)
						})
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
		})
	}
}
