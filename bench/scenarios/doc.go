// Package scenarios holds the bench scenarios that run Vitrine as a cluster of separate processes
// (package bench/cluster): freshness (write to visible on every edge), coldstart (an empty edge
// serving a large tenant from the stream alone) and writes (carts through an edge against the
// origin directly, and checkouts under contention).
//
// # Overview
//
// Each constructor returns a bench.Scenario for the caller's registry:
//
//	var reg bench.Registry
//	reg.Add(scenarios.Freshness(), scenarios.ColdStart(), scenarios.Writes())
//
// Every scenario starts its own cluster (fresh database, NATS store and processes), measures, and
// closes it before returning, whatever happens. Env.Short selects the short version (seconds of
// measurement and small catalogs, so that `make bench` runs every scenario in under 5 minutes).
//
// # Invariants
//
//   - Each measurement states its method in the report, and every target of the issue it
//     measures is printed beside the measured value with "met" or "missed".
//   - Child processes run on Env.ServerCPUs; the load this package generates runs in the bench
//     process (pinned by the caller to Env.LoadCPUs).
//   - Correctness checks (the value an edge serves, orders against stock) are made on the data
//     itself, never inferred from status codes alone.
package scenarios
