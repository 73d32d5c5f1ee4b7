package schema

// designRoutes declares the CMS routes of the site design (WordPress's templates, global
// styles, global styles revisions and themes controllers): templates and template parts by
// string id, global styles by integer id and by theme, and the store's themes. None is public:
// every route is answered by the origin (edges forward them), from its full replica with the
// posts' read engine, checking WordPress's capabilities itself (reads: edit_posts; writes:
// edit_theme_options). Template ids span two path segments ({id*}: theme//slug; see
// JoinedCapture). The global-styles item, theme and variation routes are marked not
// batch-capable (NoBatch), as the spec says; the others carry no flag.
func designRoutes() []Route {
	var out []Route
	for _, t := range []*PostType{PostTypeByName(TypeTemplate), PostTypeByName(TypeTemplatePart)} {
		n, col := "cms."+t.RestBase, t.Collection()
		item, parent := col+"/{id*}", col+"/{parent*}"
		list := []Arg{argContext,
			{Name: "cms_id", Type: ArgInt, HasMin: true, Min: 0, HasMax: true, Max: MaxExposedID, Description: "Limit to the specified post id."},
			{Name: "area", Type: ArgString, Description: "Limit to the specified template part area."},
			{Name: "post_type", Type: ArgString, Description: "Post type to get the templates for."},
		}
		out = append(out,
			Route{Name: n + ".list", Method: "GET", Interface: CMS, Path: col, Server: AtOrigin, Args: list},
			Route{Name: n + ".create", Method: "POST", Interface: CMS, Path: col, Server: AtOrigin},
			Route{Name: n + ".lookup", Method: "GET", Interface: CMS, Path: col + "/lookup", Server: AtOrigin, Args: []Arg{
				{Name: "slug", Type: ArgString, Required: true, Description: "The slug of the template to get the fallback for"},
				{Name: "is_custom", Type: ArgBool, Description: "Indicates if a template is custom or part of the template hierarchy"},
				{Name: "template_prefix", Type: ArgString, Description: "The template prefix for the created template. This is used to extract the main template type, e.g. in `taxonomy-books` extracts the `taxonomy`"},
			}},
			Route{Name: n + ".get", Method: "GET", Interface: CMS, Path: item, Server: AtOrigin, Args: []Arg{argContext}},
		)
		for _, m := range []string{"POST", "PUT", "PATCH"} {
			out = append(out, Route{Name: n + ".update", Method: m, Interface: CMS, Path: item, Server: AtOrigin})
		}
		out = append(out,
			Route{Name: n + ".delete", Method: "DELETE", Interface: CMS, Path: item, Server: AtOrigin,
				Args: []Arg{{Name: "force", Type: ArgBool, Default: "false", Description: "Whether to bypass Trash and force deletion."}}},
			Route{Name: n + ".revisions.list", Method: "GET", Interface: CMS, Path: parent + "/revisions", Server: AtOrigin, Args: revisionListArgs()},
			Route{Name: n + ".revisions.get", Method: "GET", Interface: CMS, Path: parent + "/revisions/{id}", Server: AtOrigin, Args: []Arg{argContext}},
			Route{Name: n + ".revisions.delete", Method: "DELETE", Interface: CMS, Path: parent + "/revisions/{id}", Server: AtOrigin,
				Args: []Arg{{Name: "force", Type: ArgBool, Default: "false", Description: "Required to be true, as revisions do not support trashing."}}},
			Route{Name: n + ".autosaves.list", Method: "GET", Interface: CMS, Path: item + "/autosaves", Server: AtOrigin, Args: []Arg{argContext}},
			Route{Name: n + ".autosaves.create", Method: "POST", Interface: CMS, Path: item + "/autosaves", Server: AtOrigin},
			Route{Name: n + ".autosaves.get", Method: "GET", Interface: CMS, Path: parent + "/autosaves/{id}", Server: AtOrigin, Args: []Arg{argContext}},
		)
	}
	const gs = "/cms/v2/global-styles"
	out = append(out,
		Route{Name: "cms.global-styles.revisions.list", Method: "GET", Interface: CMS, Path: gs + "/{parent}/revisions", Server: AtOrigin, Args: []Arg{
			argContext, cmsPageArg(),
			{Name: "per_page", Type: ArgInt, HasMin: true, Min: 1, HasMax: true, Max: CMSMaxPerPage, Description: "Maximum number of items to be returned in result set."},
			{Name: "offset", Type: ArgInt, Description: "Offset the result set by a specific number of items."},
		}},
		Route{Name: "cms.global-styles.revisions.get", Method: "GET", Interface: CMS, Path: gs + "/{parent}/revisions/{id}", Server: AtOrigin, Args: []Arg{argContext}},
		Route{Name: "cms.global-styles.variations", Method: "GET", Interface: CMS, Path: gs + "/themes/{stylesheet}/variations", Server: AtOrigin, NoBatch: true},
		Route{Name: "cms.global-styles.theme", Method: "GET", Interface: CMS, Path: gs + "/themes/{stylesheet}", Server: AtOrigin, NoBatch: true},
		Route{Name: "cms.global-styles.get", Method: "GET", Interface: CMS, Path: gs + "/{id}", Server: AtOrigin, NoBatch: true},
	)
	for _, m := range []string{"POST", "PUT", "PATCH"} {
		out = append(out, Route{Name: "cms.global-styles.update", Method: m, Interface: CMS, Path: gs + "/{id}", Server: AtOrigin, NoBatch: true})
	}
	// The store's themes (WordPress's themes controller, which block editors read to find the
	// active theme and its global styles record): the active one to editors, all to
	// administrators.
	return append(out,
		Route{Name: "cms.themes.list", Method: "GET", Interface: CMS, Path: "/cms/v2/themes", Server: AtOrigin, Args: []Arg{
			{Name: "status", Type: ArgStringList, Enum: []string{"active", "inactive"}, Description: "Limit result set to themes assigned one or more statuses."},
		}},
		Route{Name: "cms.themes.get", Method: "GET", Interface: CMS, Path: "/cms/v2/themes/{stylesheet}", Server: AtOrigin},
	)
}

// MaxAbilitiesPerPage bounds the abilities list's per_page.
const MaxAbilitiesPerPage = 100

// agentRoutes declares the routes of the agent, abilities and site health namespaces (origin
// packages agents and sitehealth). All are answered by the origin. Abilities are named
// "namespace/name" ({name*} spans two segments); the agent routes declare no arguments (the
// spec) and take their input in JSON bodies, the session token as Authorization: Bearer (the
// origin lets it through to origin/agents unauthenticated); site health is for administrators.
func agentRoutes() []Route {
	const ab = "/cms-abilities/v1"
	out := []Route{
		{Name: "abilities.list", Method: "GET", Interface: CMS, Path: ab + "/abilities", Server: AtOrigin, Args: []Arg{
			argContext, cmsPageArg(),
			{Name: "per_page", Type: ArgInt, Default: "50", HasMin: true, Min: 1, HasMax: true, Max: MaxAbilitiesPerPage, Description: "Maximum number of items to be returned in result set."},
			{Name: "category", Type: ArgString, Description: "Limit results to abilities in specific ability category."},
		}},
		{Name: "abilities.categories.list", Method: "GET", Interface: CMS, Path: ab + "/categories", Server: AtOrigin, Args: []Arg{
			argContext, cmsPageArg(),
			{Name: "per_page", Type: ArgInt, Default: "50", HasMin: true, Min: 1, HasMax: true, Max: MaxAbilitiesPerPage, Description: "Maximum number of items to be returned in result set."},
		}},
		{Name: "abilities.categories.get", Method: "GET", Interface: CMS, Path: ab + "/categories/{slug}", Server: AtOrigin, Args: []Arg{argContext}},
		{Name: "abilities.get", Method: "GET", Interface: CMS, Path: ab + "/abilities/{name*}", Server: AtOrigin, Args: []Arg{argContext}},
	}
	// The run route takes every method, as WordPress registers it: the ability's annotations
	// choose the one it accepts (GET read-only, DELETE destructive and idempotent, POST the
	// others); any other is its 405 rest_ability_invalid_method.
	for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
		out = append(out, Route{Name: "abilities.run", Method: m, Interface: CMS, Path: ab + "/abilities/{name*}/run", Server: AtOrigin})
	}
	out = append(out, []Route{
		{Name: "agent.connect", Method: "POST", Interface: CMS, Path: "/agent/v1/connect", Server: AtOrigin},
		{Name: "agent.execute", Method: "POST", Interface: CMS, Path: "/agent/v1/execute", Server: AtOrigin},
		{Name: "agent.status", Method: "GET", Interface: CMS, Path: "/agent/v1/status", Server: AtOrigin},
	}...)
	// One route per site health test, as WordPress registers them: route "sitehealth.{test}".
	for _, test := range SiteHealthTests {
		out = append(out, Route{Name: "sitehealth." + test, Method: "GET", Interface: CMS, Path: "/cms-site-health/v1/tests/" + test, Server: AtOrigin})
	}
	return out
}

// SiteHealthTests are the tests of the site health namespace, each at
// /cms-site-health/v1/tests/{test}.
var SiteHealthTests = []string{"database", "nats", "replica-lag", "outbound-http", "authorization-header"}
