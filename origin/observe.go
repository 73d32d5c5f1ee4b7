package origin

import "vitrine/edge/pipeline"

// SetAccessLog has every request the origin answers written to a (nil: none, the default). Safe
// to call at any time.
func (s *Server) SetAccessLog(a *pipeline.AccessLog) { s.http.SetAccessLog(a) }
