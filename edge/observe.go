package edge

import (
	"vitrine/edge/cache"
	"vitrine/edge/pipeline"
)

// CacheMetrics returns a snapshot of the rendered cache's counters and sizes, and false when the
// edge runs without a cache. Safe for concurrent use.
func (s *Server) CacheMetrics() (cache.Metrics, bool) {
	if s.cache == nil {
		return cache.Metrics{}, false
	}
	return s.cache.Metrics(), true
}

// SetAccessLog has every request the edge answers written to a (nil: none, the default). Safe
// to call at any time.
func (s *Server) SetAccessLog(a *pipeline.AccessLog) { s.http.SetAccessLog(a) }
