// Package searchcmp measures edge/search against bleve v2.6.1 on the same catalog: build time,
// memory and query latency.
//
// It has no code of its own: the comparison is in its tests, on the deterministic synthetic
// catalogs of edge/search/searchtest (10k and 100k products). Run it with
//
//	go test ./bench/searchcmp -run '^$' -bench . -benchtime 1x        # build throughput and memory
//	go test ./bench/searchcmp -run '^$' -bench '/(edge|bleve)/(one|two|typo|rare)'  # query latency
//
// -short skips the 100k catalog (bleve takes about a minute to index it). The measured numbers
// are at the top of searchcmp_test.go.
package searchcmp
