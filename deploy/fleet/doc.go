// Package fleet runs a multi-region Vitrine fleet on one Linux machine: a core (PostgreSQL, the
// hub NATS with JetStream domain "central", the origin and the relay) and two or three regions
// (each a NATS leaf node and its edges), every part in its own network namespace, the regions
// joined to the core by emulated long-distance links. It is a measuring instrument for issue 19:
// freshness across 80 ms of round trip, a region cut off, packet loss, rolling restarts; it is
// driven from Go (Up, SetLink, Partition, RestartEdge, Down) or by `vitrine fleet`.
//
// # Links
//
// The kernel here has no sch_netem, so delay and loss are made in user space: each core↔region
// link is a pair of TAP devices, one in the core's namespace and one in the region's, and a Wire
// copies Ethernet frames between their file descriptors, per direction with a one-way delay,
// uniform jitter, a loss probability, an optional rate and a partition switch, counting frames
// and bytes (also per TCP/UDP service port). A region also has a direct veth to the host that
// does not cross its wire: the region's "local clients" (the host, a load generator) reach its
// edges through it.
//
// # Address plan (10.77.0.0/16)
//
//	core services          10.77.0.1            (on the core's loopback)
//	region i (1-based)     10.77.i.1            its NATS leaf node (and mirror)
//	edge j of region i     10.77.i.(10+j)
//	wire of region i       10.77.254.(4i+1)/30  core side, 10.77.254.(4i+2) region side
//	host link k            10.77.253.(4k+1)/30  host side, 10.77.253.(4k+2) namespace side
//	                       (k = 0 the core, k = i region i)
//
// # Invariants
//
//   - A region reaches the core only through its wire and never another region: its only route
//     off its own addresses is 10.77.0.0/24 through the wire, forwarding is off in every
//     namespace, and the host link carries only traffic addressed to the host.
//   - Every name the fleet creates on the machine starts with Config.Prefix (namespaces
//     <prefix>core and <prefix><region>, host veths <prefix>h-<name>), so Cleanup can remove a
//     fleet whose owner died. TAP devices close with their owner's descriptors.
//   - Within one direction of a wire, frames keep their order while the jitter is zero.
//   - Every process runs in its namespace with its output in <Dir>/logs/<name>.log; it is stopped
//     with SIGTERM (PostgreSQL SIGINT, a fast shutdown) and killed after a timeout, and it dies
//     with the process that started it (parent-death signal).
//   - NATS inside the fleet follows deploy/nats's layout (account VITRINE with JetStream, a
//     system account, leaf connections bound to VITRINE) but without TLS, and a client naming
//     no credentials is VITRINE's user (no_auth_user): processes run with --nats-insecure. The
//     fleet is a closed test bed; deploy/ holds the production configuration (TLS, nkeys).
//   - With `vitrine mirror` in the binary (and Config.NoMirror unset), each region runs one and
//     its edges read the region's mirrors (no JetStream domain); otherwise edges read the
//     central domain through their leaf node (--nats-js-domain central).
package fleet
