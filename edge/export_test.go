package edge

// SetOneByOne has s set a cached answer's headers one by one instead of as one block of lines
// (tests check that both write the same headers).
func SetOneByOne(s *Server, v bool) { s.oneByOne = v }

// CacheWait waits until the cache's pending stores are applied.
func CacheWait(s *Server) { s.cache.Wait() }
