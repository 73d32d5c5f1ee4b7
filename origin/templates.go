package origin

// templateHandlers binds the routes of templates and template parts (schema/routes_design.go).
func (s *Server) templateHandlers() {}
