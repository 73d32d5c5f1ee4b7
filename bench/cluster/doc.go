// Package cluster runs a whole Vitrine deployment as separate processes for the bench suite:
// the embedded nats-server (`vitrine nats`), a fresh PostgreSQL database, a relay, an origin and
// edges, each a child process of the vitrine binary, pinned to the server CPUs when given.
//
// # Overview
//
//	c, err := cluster.Start(ctx, cluster.Config{Binary: bin, DatabaseURL: url, Origin: true, Edges: 2})
//	if err != nil { ... }
//	defer c.Close()
//	shop, err := c.CreateTenant(ctx, "shop", cluster.TenantOptions{Products: 10000})
//	// load c.Edges[0].Addr with Host shop.Host; c.PIDs() for CPU accounting
//
// Start creates a database named vitrine_bench_<random> on the server of Config.DatabaseURL and
// migrates it in process, starts NATS on a free port with its store in a temporary folder, then
// the relay (which creates the streams), the origin and the edges, waiting for each one's /readyz
// on its ops address. CreateTenant registers a tenant with an administrator and an application
// password, seeds it with origin/seed (in process, through origin/store, the same code as `vitrine
// seed`) and waits until every origin and edge serves it at the version the seed reached.
//
// # Invariants
//
//   - Close stops every child (SIGTERM, then SIGKILL after a grace period), drops the database
//     and removes the temporary folder, on every path: Start cleans up after itself when it
//     fails, and children get SIGKILL from the kernel if the bench process dies (Pdeathsig).
//   - Children are started with taskset when Config.CPUs is set, so that every thread of theirs
//     runs on those CPUs from the first instruction (and the Go runtime sizes GOMAXPROCS to them).
//   - A child that exits before Close is an error that Cluster.Err reports, with the tail of its
//     log (each child's stderr goes to a file in the temporary folder).
//   - Nothing here is global: a Cluster owns its processes, ports, database and folder.
package cluster
