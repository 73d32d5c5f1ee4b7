package schema

import "strconv"

// oembedRoutes declares the oEmbed routes (WordPress's WP_oEmbed_Controller) and the embed page:
//
//   - GET /oembed/1.0/embed: a public read edges answer from the replica (edge/reads/oembed.go),
//     with WordPress's arguments: url (required), format (json, or xml; any other value is
//     json, as wp_oembed_ensure_format coerces it) and maxwidth (absint, default 600), plus
//     maxheight, which the oEmbed specification asks a provider to honour.
//   - GET /oembed/1.0/proxy: answered by the origin (origin/oembed), which fetches other sites'
//     oEmbed data for editors. Its permission is edit_posts, checked after the arguments as
//     WordPress does (Auth and Cap say so to the Allow header).
//   - GET / and /index.php with embed (a permalink with &embed=true): the embed page the iframe
//     of an oEmbed html shows. It is a commerce-interface route (a URL path, not a rest_route):
//     the pipeline's site home page gives way to it when the query carries embed
//     (pipeline.IsSiteHome), and edges answer it from the replica like any public read.
func oembedRoutes() []Route {
	width := strconv.Itoa(OEmbedDefaultWidth)
	embedArgs := []Arg{
		{Name: "url", Type: ArgString, Required: true, Description: "The URL of the resource for which to fetch oEmbed data."},
		{Name: "format", Type: ArgString, Default: "json"},
		{Name: "maxwidth", Type: ArgString, Default: width},
		{Name: "maxheight", Type: ArgString, Description: "The maximum height of the embed frame in pixels."},
	}
	proxyArgs := []Arg{
		{Name: "url", Type: ArgString, Required: true, Description: "The URL of the resource for which to fetch oEmbed data."},
		{Name: "format", Type: ArgString, Default: "json", Enum: []string{"json", "xml"}, Description: "The oEmbed format to use."},
		{Name: "maxwidth", Type: ArgInt, Default: width, Description: "The maximum width of the embed frame in pixels."},
		{Name: "maxheight", Type: ArgInt, Description: "The maximum height of the embed frame in pixels."},
		{Name: "discover", Type: ArgBool, Default: "true", Description: "Whether to perform an oEmbed discovery request for unsanctioned providers."},
	}
	pageArgs := []Arg{
		{Name: "p", Type: ArgString, Description: "The id of the record (plain permalinks)."},
		{Name: "page_id", Type: ArgString, Description: "The id of the page (plain permalinks)."},
		{Name: "attachment_id", Type: ArgString, Description: "The id of the attachment (plain permalinks)."},
		{Name: "embed", Type: ArgString, Description: "Asks for the record's embed page."},
	}
	return []Route{
		{Name: "oembed.embed", Method: "GET", Interface: CMS, Path: "/oembed/1.0/embed", Server: AtEdge, Args: embedArgs},
		{Name: "oembed.proxy", Method: "GET", Interface: CMS, Path: "/oembed/1.0/proxy", Server: AtOrigin, Auth: AuthStaff, Cap: CapEditPosts, Args: proxyArgs},
		{Name: "oembed.page", Method: "GET", Interface: Commerce, Path: "/", Server: AtEdge, Args: pageArgs},
		{Name: "oembed.page", Method: "GET", Interface: Commerce, Path: "/index.php", Server: AtEdge, Args: pageArgs},
	}
}
