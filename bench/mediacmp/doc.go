// Package mediacmp measures how fast an edge answers media files (edge/files over a blob.FS)
// against nginx serving the same files from a directory, on the same machine in the same run.
//
// It has no code of its own: the comparison is BenchmarkMediaHits in its tests. The test binary
// re-runs itself as the media server: a fasthttp server with the edge's settings whose handler
// looks the file up, as the edge's tail does from its replica, and calls files.Server.Serve
// (with the default cache, and with files up to 4 MiB cached), or, as the baseline, answers the
// same bytes from memory with bare fasthttp. nginx 1.22 (Debian's, installed by
// deploy/local/ensure-nginx.sh when missing) serves the same bytes with sendfile and
// open_file_cache. wrk drives each in turn. Servers run on one CPU, wrk on another (taskset),
// in interleaved rounds, and every server's bodies are checked byte for byte before measuring.
// Run it with
//
//	WRK=1 deploy/local/ensure-nginx.sh    # nginx and wrk, when missing
//	go test ./bench/mediacmp -run '^$' -bench . -benchtime 1x -timeout 30m -v
//
// (-short: one round of 3 s instead of three of 8 s). The numbers measured are in
// bench/results/2026-11-26-media/README.md.
package mediacmp
