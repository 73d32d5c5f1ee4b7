// Package bench is Vitrine's bench suite: named scenarios that start real Vitrine processes (and
// the servers it is compared with), drive load at them with package load, and return a report
// section that package report writes as summary.md, results.json and SVG plots.
//
// # Overview
//
// A Scenario is a name, a description and a Run function. Run receives an Env (the vitrine
// binary to start as child processes, a PostgreSQL URL for fresh databases, the results folder,
// the CPU split between servers and the load generator, a progress callback and a logger) and
// returns one report.Section. A Registry holds the scenarios of one binary in order; cmd/vitrine
// builds it and runs `vitrine bench <scenario|all>`.
//
// # Invariants
//
//   - A scenario cleans up everything it started (child processes, temporary folders, databases)
//     on every exit path, including a cancelled context.
//   - Numbers that depend on the machine are reported as ratios against a baseline measured in
//     the same run, with the CPU used by the server, the generator and everything else.
//   - When Env.ServerCPUs and Env.LoadCPUs are set, server processes run only on ServerCPUs and the
//     generator only on LoadCPUs; the report says which was pinned where.
//   - The package holds no global state: the registry is a value built by the caller.
package bench
