package schema

import "strconv"

// APIKeysPagePath is the path of the store settings page for server keys.
const APIKeysPagePath = CMSAdminPath + "/store-settings/api-keys"

// WebhooksPagePath is the path of the store settings page for webhook endpoints.
const WebhooksPagePath = CMSAdminPath + "/store-settings/webhooks"

// AuthorizeAppPath is the path of the application-password authorization page.
const AuthorizeAppPath = CMSAdminPath + "/authorize-application.php"

// AuthorizeAppURL returns the application-password authorization page of a store: the
// discovery index's authentication.application-passwords.endpoints.authorization.
func AuthorizeAppURL(base string) string { return base + AuthorizeAppPath }

// peopleRoutes declares the CMS routes of terms (categories, tags), users and application
// passwords. Anonymous term reads are answered by edges from the replica; users (whose emails
// and roles are private) and application passwords by the origin.
func peopleRoutes() []Route {
	perPage := Arg{Name: "per_page", Type: ArgInt, Default: strconv.Itoa(CMSDefaultPerPage), HasMin: true, Min: 1, HasMax: true, Max: CMSMaxPerPage,
		Description: "Maximum number of items to be returned in result set."}
	termList := func(hierarchical bool) []Arg {
		args := []Arg{
			argContext, cmsPageArg(), perPage,
			{Name: "search", Type: ArgString, Description: "Limit results to those matching a string."},
			{Name: "exclude", Type: ArgIntList, Description: "Ensure result set excludes specific IDs."},
			{Name: "include", Type: ArgIntList, Description: "Limit result set to specific IDs."},
		}
		if !hierarchical {
			args = append(args, Arg{Name: "offset", Type: ArgInt, HasMin: true, Min: 0, HasMax: true, Max: MaxPage * CMSMaxPerPage, Description: "Offset the result set by a specific number of items."})
		}
		args = append(args,
			Arg{Name: "order", Type: ArgString, Default: "asc", Enum: []string{"asc", "desc"}, Description: "Order sort attribute ascending or descending."},
			Arg{Name: "orderby", Type: ArgString, Default: "name", Enum: []string{"id", "include", "name", "slug", "include_slugs", "term_group", "description", "count"},
				Description: "Sort collection by term attribute."},
			Arg{Name: "hide_empty", Type: ArgBool, Default: "false", Description: "Whether to hide terms not assigned to any posts."},
		)
		if hierarchical {
			args = append(args, Arg{Name: "parent", Type: ArgInt, HasMin: true, Min: 0, HasMax: true, Max: MaxExposedID, Description: "Limit result set to terms assigned to a specific parent."})
		}
		return append(args,
			Arg{Name: "post", Type: ArgInt, HasMin: true, Min: 0, HasMax: true, Max: MaxExposedID, Description: "Limit result set to terms assigned to a specific post."},
			Arg{Name: "slug", Type: ArgStringList, Description: "Limit result set to terms with one or more specific slugs."},
		)
	}
	var routes []Route
	for _, base := range []string{"categories", "tags"} {
		path := "/cms/v2/" + base
		name := "cms." + base
		routes = append(routes,
			Route{Name: name + ".list", Method: "GET", Interface: CMS, Path: path, Server: AtEdge, Args: termList(base == "categories"), Batch: true},
			Route{Name: name + ".create", Method: "POST", Interface: CMS, Path: path, Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCategories, Batch: true},
			Route{Name: name + ".get", Method: "GET", Interface: CMS, Path: path + "/{id}", Server: AtEdge, Args: []Arg{argContext}, Batch: true},
		)
		for _, m := range []string{"POST", "PUT", "PATCH"} {
			routes = append(routes, Route{Name: name + ".update", Method: m, Interface: CMS, Path: path + "/{id}", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCategories, Batch: true})
		}
		routes = append(routes, Route{Name: name + ".delete", Method: "DELETE", Interface: CMS, Path: path + "/{id}", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCategories, Batch: true,
			Args: []Arg{{Name: "force", Type: ArgBool, Default: "false", Description: "Required to be true, as terms do not support trashing."}}})
	}

	userList := []Arg{
		argContext, cmsPageArg(), perPage,
		{Name: "search", Type: ArgString, Description: "Limit results to those matching a string."},
		{Name: "exclude", Type: ArgIntList, Description: "Ensure result set excludes specific IDs."},
		{Name: "include", Type: ArgIntList, Description: "Limit result set to specific IDs."},
		{Name: "offset", Type: ArgInt, HasMin: true, Min: 0, HasMax: true, Max: MaxPage * CMSMaxPerPage, Description: "Offset the result set by a specific number of items."},
		{Name: "order", Type: ArgString, Default: "asc", Enum: []string{"asc", "desc"}, Description: "Order sort attribute ascending or descending."},
		{Name: "orderby", Type: ArgString, Default: "name", Enum: []string{"id", "include", "name", "registered_date", "slug", "include_slugs", "email", "url"},
			Description: "Sort collection by user attribute."},
		{Name: "slug", Type: ArgStringList, Description: "Limit result set to users with one or more specific slugs."},
		{Name: "roles", Type: ArgStringList, Description: "Limit result set to users matching at least one specific role provided. Accepts csv list or single role."},
		{Name: "capabilities", Type: ArgStringList, Description: "Limit result set to users matching at least one specific capability provided. Accepts csv list or single capability."},
		{Name: "who", Type: ArgString, Enum: []string{"authors"}, Description: "Limit result set to users who are considered authors."},
		{Name: "has_published_posts", Type: ArgBool, Description: "Limit result set to users who have published posts."},
	}
	deleteArgs := []Arg{
		{Name: "force", Type: ArgBool, Default: "false", Description: "Required to be true, as users do not support trashing."},
		{Name: "reassign", Type: ArgInt, HasMin: true, Min: 0, HasMax: true, Max: MaxExposedID, Description: "Reassign the deleted user's posts and links to this user ID. Required: the handler refuses a delete without it (rest_missing_callback_param), as WordPress does."},
	}
	routes = append(routes,
		Route{Name: "cms.users.list", Method: "GET", Interface: CMS, Path: "/cms/v2/users", Server: AtOrigin, Args: userList, Batch: true},
		Route{Name: "cms.users.create", Method: "POST", Interface: CMS, Path: "/cms/v2/users", Server: AtOrigin, Auth: AuthStaff, Cap: CapCreateUsers, Batch: true},
	)
	for _, p := range []string{"/cms/v2/users/{id}", "/cms/v2/users/me"} {
		routes = append(routes, Route{Name: "cms.users.get", Method: "GET", Interface: CMS, Path: p, Server: AtOrigin, Args: []Arg{argContext}, Batch: true})
		for _, m := range []string{"POST", "PUT", "PATCH"} {
			routes = append(routes, Route{Name: "cms.users.update", Method: m, Interface: CMS, Path: p, Server: AtOrigin, Auth: AuthStaff, Cap: CapRead, Batch: true})
		}
		routes = append(routes, Route{Name: "cms.users.delete", Method: "DELETE", Interface: CMS, Path: p, Server: AtOrigin, Auth: AuthStaff, Cap: CapEditUsers, Batch: true, Args: deleteArgs})
	}

	const aps = "/cms/v2/users/{user_id}/application-passwords"
	routes = append(routes,
		Route{Name: "cms.apppasswords.list", Method: "GET", Interface: CMS, Path: aps, Server: AtOrigin, Auth: AuthStaff, Cap: CapRead, Args: []Arg{argContext}},
		Route{Name: "cms.apppasswords.create", Method: "POST", Interface: CMS, Path: aps, Server: AtOrigin, Auth: AuthStaff, Cap: CapRead},
		Route{Name: "cms.apppasswords.deleteall", Method: "DELETE", Interface: CMS, Path: aps, Server: AtOrigin, Auth: AuthStaff, Cap: CapRead},
		Route{Name: "cms.apppasswords.introspect", Method: "GET", Interface: CMS, Path: aps + "/introspect", Server: AtOrigin, Auth: AuthStaff, Cap: CapRead, Args: []Arg{argContext}},
		Route{Name: "cms.apppasswords.get", Method: "GET", Interface: CMS, Path: aps + "/{uuid}", Server: AtOrigin, Auth: AuthStaff, Cap: CapRead, Args: []Arg{argContext}},
	)
	for _, m := range []string{"POST", "PUT", "PATCH"} {
		routes = append(routes, Route{Name: "cms.apppasswords.update", Method: m, Interface: CMS, Path: aps + "/{uuid}", Server: AtOrigin, Auth: AuthStaff, Cap: CapRead})
	}
	routes = append(routes, Route{Name: "cms.apppasswords.delete", Method: "DELETE", Interface: CMS, Path: aps + "/{uuid}", Server: AtOrigin, Auth: AuthStaff, Cap: CapRead})

	// The application-password authorization page (an HTML page, not a REST route: a URL path
	// like the commerce routes'), served by the origin (origin/authorize.go).
	for _, m := range []string{"GET", "POST"} {
		routes = append(routes, Route{Name: "cms.authorize", Method: m, Interface: Commerce, Path: AuthorizeAppPath, Server: AtOrigin})
	}
	// The store settings page for server keys (origin/settings.go): signed in as an
	// administrator, with the authorization page's session.
	for _, m := range []string{"GET", "POST"} {
		routes = append(routes, Route{Name: "admin.settings.apikeys", Method: m, Interface: Commerce, Path: APIKeysPagePath, Server: AtOrigin})
	}
	// The store settings page for webhook endpoints and their delivery log (origin/settings_webhooks.go).
	for _, m := range []string{"GET", "POST"} {
		routes = append(routes, Route{Name: "admin.settings.webhooks", Method: m, Interface: Commerce, Path: WebhooksPagePath, Server: AtOrigin})
	}
	return routes
}
