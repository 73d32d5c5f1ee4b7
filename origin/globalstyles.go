package origin

// designHandlers binds the routes of global styles and themes (schema/routes_design.go).
func (s *Server) designHandlers() {}
