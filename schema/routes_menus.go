package schema

import "strconv"

// menuRoutes declares the CMS routes of navigation menus (/cms/v2/menus, WordPress's menus
// controller: a terms controller of the nav_menu taxonomy, batch-capable) and of menu locations
// (/cms/v2/menu-locations, read only, not batch-capable). Menus are not public: every route is
// answered by the origin (edges forward them), which checks WordPress's capabilities.
func menuRoutes() []Route {
	const path = "/cms/v2/menus"
	list := []Arg{
		argContext, cmsPageArg(),
		{Name: "per_page", Type: ArgInt, Default: strconv.Itoa(CMSDefaultPerPage), HasMin: true, Min: 1, HasMax: true, Max: CMSMaxPerPage,
			Description: "Maximum number of items to be returned in result set."},
		{Name: "search", Type: ArgString, Description: "Limit results to those matching a string."},
		{Name: "exclude", Type: ArgIntList, Description: "Ensure result set excludes specific IDs."},
		{Name: "include", Type: ArgIntList, Description: "Limit result set to specific IDs."},
		{Name: "offset", Type: ArgInt, HasMin: true, Min: 0, HasMax: true, Max: MaxPage * CMSMaxPerPage, Description: "Offset the result set by a specific number of items."},
		{Name: "order", Type: ArgString, Default: "asc", Enum: []string{"asc", "desc"}, Description: "Order sort attribute ascending or descending."},
		{Name: "orderby", Type: ArgString, Default: "name", Enum: []string{"id", "include", "name", "slug", "include_slugs", "term_group", "description", "count"},
			Description: "Sort collection by term attribute."},
		{Name: "hide_empty", Type: ArgBool, Default: "false", Description: "Whether to hide terms not assigned to any posts."},
		{Name: "post", Type: ArgInt, HasMin: true, Min: 0, HasMax: true, Max: MaxExposedID, Description: "Limit result set to terms assigned to a specific post."},
		{Name: "slug", Type: ArgStringList, Description: "Limit result set to terms with one or more specific slugs."},
	}
	routes := []Route{
		{Name: "cms.menus.list", Method: "GET", Interface: CMS, Path: path, Server: AtOrigin, Args: list, Batch: true},
		{Name: "cms.menus.create", Method: "POST", Interface: CMS, Path: path, Server: AtOrigin, Auth: AuthStaff, Cap: CapEditThemeOptions, Batch: true},
		{Name: "cms.menus.get", Method: "GET", Interface: CMS, Path: path + "/{id}", Server: AtOrigin, Args: []Arg{argContext}, Batch: true},
	}
	for _, m := range []string{"POST", "PUT", "PATCH"} {
		routes = append(routes, Route{Name: "cms.menus.update", Method: m, Interface: CMS, Path: path + "/{id}", Server: AtOrigin, Auth: AuthStaff, Cap: CapEditThemeOptions, Batch: true})
	}
	return append(routes,
		Route{Name: "cms.menus.delete", Method: "DELETE", Interface: CMS, Path: path + "/{id}", Server: AtOrigin, Auth: AuthStaff, Cap: CapEditThemeOptions, Batch: true,
			Args: []Arg{{Name: "force", Type: ArgBool, Default: "false", Description: "Required to be true, as terms do not support trashing."}}},
		Route{Name: "cms.menulocations.list", Method: "GET", Interface: CMS, Path: "/cms/v2/menu-locations", Server: AtOrigin, Auth: AuthStaff, Cap: CapEditThemeOptions, Args: []Arg{argContext}},
		Route{Name: "cms.menulocations.get", Method: "GET", Interface: CMS, Path: "/cms/v2/menu-locations/{location}", Server: AtOrigin, Auth: AuthStaff, Cap: CapEditThemeOptions, Args: []Arg{argContext}},
	)
}
