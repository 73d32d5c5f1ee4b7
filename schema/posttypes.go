package schema

import (
	"strconv"
	"strings"
)

// PostType describes one record type of the CMS post id space (ARCHITECTURE 2.3): posts, pages,
// reusable blocks, menu items and navigation menus share the Post record, its storage, its
// replication and its read engine; a PostType says how each differs.
type PostType struct {
	// Name is the stored type ("post", "page", "cms_block", "nav_menu_item", "cms_navigation").
	Name string
	// RestBase is the collection's path segment: /cms/v2/{RestBase}.
	RestBase string
	// Hierarchical types have parent (and pages menu_order).
	Hierarchical bool
	// PublicRead types let anonymous callers read their published records, so their published
	// records replicate to edges. Blocks and menu items are readable only with capabilities
	// (WordPress's read_post on wp_block, edit rights on nav_menu_item): their GETs go to the
	// origin.
	PublicRead bool
	// Trash: the type can be trashed (menu items must be deleted with force=true).
	Trash bool
	// Revisions: an update that changes the title, content or excerpt keeps a revision, and the
	// type has the revisions routes (revisions.go). Autosaves: the type has the autosaves routes.
	Revisions, Autosaves bool
	// Caps are the type's capabilities (WordPress's capability_type mapping).
	Caps PostTypeCaps
	// DefaultPerPage, DefaultOrder and DefaultOrderBy are the collection defaults.
	DefaultPerPage int
	DefaultOrder   string
	DefaultOrderBy string
	// Taxonomies are the term filters of the collection, by rest base ("categories", "tags",
	// "menus", "cms_pattern_category"); the first of a hierarchical pair takes include_children.
	Taxonomies []string
	// OwnRoutes types declare their routes and bind their handlers themselves (attachments:
	// routes_media.go and origin/media): the generic post routes, handlers, batch validators and
	// revisions skip them, while the read engine, replication and permissions still treat them
	// as a post type.
	OwnRoutes bool
}

// PostTypeCaps are the capabilities a post type maps its meta capabilities to.
type PostTypeCaps struct {
	Edit, EditOthers, EditPublished, EditPrivate         Capability
	Publish, ReadPrivate                                 Capability
	Delete, DeleteOthers, DeletePublished, DeletePrivate Capability
}

var postCaps = PostTypeCaps{Edit: CapEditPosts, EditOthers: CapEditOthersPosts, EditPublished: CapEditPublishedPosts,
	EditPrivate: CapEditPrivatePosts, Publish: CapPublishPosts, ReadPrivate: CapReadPrivatePosts, Delete: CapDeletePosts,
	DeleteOthers: CapDeleteOthersPosts, DeletePublished: CapDeletePublishedPosts, DeletePrivate: CapDeletePrivatePosts}

// pageCaps: WordPress's page capabilities, which editors (and up) have and authors do not. This
// build grants them through the "others" post capabilities, which exactly the same roles hold.
var pageCaps = PostTypeCaps{Edit: CapEditOthersPosts, EditOthers: CapEditOthersPosts, EditPublished: CapEditOthersPosts,
	EditPrivate: CapEditPrivatePosts, Publish: CapEditOthersPosts, ReadPrivate: CapReadPrivatePosts, Delete: CapDeleteOthersPosts,
	DeleteOthers: CapDeleteOthersPosts, DeletePublished: CapDeleteOthersPosts, DeletePrivate: CapDeletePrivatePosts}

// themeCaps: menu items and navigation map every capability to edit_theme_options.
var themeCaps = PostTypeCaps{Edit: CapEditThemeOptions, EditOthers: CapEditThemeOptions, EditPublished: CapEditThemeOptions,
	EditPrivate: CapEditThemeOptions, Publish: CapEditThemeOptions, ReadPrivate: CapEditThemeOptions, Delete: CapEditThemeOptions,
	DeleteOthers: CapEditThemeOptions, DeletePublished: CapEditThemeOptions, DeletePrivate: CapEditThemeOptions}

// PostTypes are the post types this build serves, in route-table order.
var PostTypes = []*PostType{
	{Name: "post", RestBase: "posts", PublicRead: true, Trash: true, Revisions: true, Autosaves: true, Caps: postCaps,
		DefaultPerPage: CMSDefaultPerPage, DefaultOrder: "desc", DefaultOrderBy: "date", Taxonomies: []string{"categories", "tags"}},
	{Name: "page", RestBase: "pages", Hierarchical: true, PublicRead: true, Trash: true, Revisions: true, Autosaves: true, Caps: pageCaps,
		DefaultPerPage: CMSDefaultPerPage, DefaultOrder: "desc", DefaultOrderBy: "date"},
	{Name: "cms_block", RestBase: "blocks", Trash: true, Revisions: true, Autosaves: true, Caps: postCaps,
		DefaultPerPage: CMSDefaultPerPage, DefaultOrder: "desc", DefaultOrderBy: "date", Taxonomies: []string{"cms_pattern_category"}},
	{Name: "nav_menu_item", RestBase: "menu-items", Autosaves: true, Caps: themeCaps,
		DefaultPerPage: 100, DefaultOrder: "asc", DefaultOrderBy: "menu_order", Taxonomies: []string{"menus"}},
	{Name: "cms_navigation", RestBase: "navigation", PublicRead: true, Trash: true, Revisions: true, Autosaves: true, Caps: themeCaps,
		DefaultPerPage: CMSDefaultPerPage, DefaultOrder: "desc", DefaultOrderBy: "date"},
	// Attachments (media): status "inherit", public when their parent is (or they have none);
	// deleted only with force=true; created with upload_files (routes_media.go).
	{Name: TypeAttachment, RestBase: "media", PublicRead: true, Caps: postCaps, OwnRoutes: true,
		DefaultPerPage: CMSDefaultPerPage, DefaultOrder: "desc", DefaultOrderBy: "date"},
	// The site design (design.go, routes_design.go): templates and template parts addressed by
	// string ids (theme//slug), global styles by integer id. Never public; read with edit_posts,
	// written with edit_theme_options; revisions by the posts' rules.
	{Name: TypeTemplate, RestBase: "templates", Revisions: true, Autosaves: true, Caps: themeCaps, OwnRoutes: true},
	{Name: TypeTemplatePart, RestBase: "template-parts", Revisions: true, Autosaves: true, Caps: themeCaps, OwnRoutes: true},
	{Name: TypeGlobalStyles, RestBase: "global-styles", Revisions: true, Caps: themeCaps, OwnRoutes: true},
}

// TypeAttachment is the stored post type of media records (their status is StatusInherit).
const TypeAttachment = "attachment"

// PostTypeByName returns the post type of a stored type name, or nil.
func PostTypeByName(name string) *PostType {
	if name == "" {
		name = "post"
	}
	for _, t := range PostTypes {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// PostTypeOfRoute returns the post type a route serves ("cms.pages.list" → page), or nil.
func PostTypeOfRoute(r *Route) *PostType {
	rest, ok := strings.CutPrefix(r.Name, "cms.")
	if !ok {
		return nil
	}
	base, _, _ := strings.Cut(rest, ".")
	for _, t := range PostTypes {
		if t.RestBase == base {
			return t
		}
	}
	return nil
}

// Collection returns the route of the type's collection ("/cms/v2/pages").
func (t *PostType) Collection() string { return "/cms/v2/" + t.RestBase }

// Item returns the route of one record of the type.
func (t *PostType) Item(id PostID) string {
	return t.Collection() + "/" + strconv.FormatInt(int64(id), 10)
}

// The posts collection's statuses and orderings (WordPress's posts controller).
var (
	collectionStatuses = []string{"publish", "future", "draft", "pending", "private", "trash", "auto-draft", "inherit",
		"request-pending", "request-confirmed", "request-failed", "request-completed", "any"}
	postOrderBy = []string{"author", "date", "id", "include", "modified", "parent", "relevance", "slug", "include_slugs", "title"}
)

// collectionArgs declares the collection query of a post type (spec: collection query
// parameters; reference 5.1).
func (t *PostType) collectionArgs() []Arg {
	orderby := postOrderBy
	if t.Name == "page" || t.Name == "nav_menu_item" {
		orderby = append(append([]string{}, postOrderBy...), "menu_order")
	}
	args := []Arg{
		argContext,
		cmsPageArg(),
		{Name: "per_page", Type: ArgInt, Default: strconv.Itoa(t.DefaultPerPage), HasMin: true, Min: 1, HasMax: true, Max: CMSMaxPerPage, Description: "Maximum number of items to be returned in result set."},
		{Name: "search", Type: ArgString, Description: "Limit results to those matching a string."},
		{Name: "after", Type: ArgDateTime, Description: "Limit response to posts published after a given ISO8601 compliant date."},
		{Name: "modified_after", Type: ArgDateTime, Description: "Limit response to posts modified after a given ISO8601 compliant date."},
		{Name: "before", Type: ArgDateTime, Description: "Limit response to posts published before a given ISO8601 compliant date."},
		{Name: "modified_before", Type: ArgDateTime, Description: "Limit response to posts modified before a given ISO8601 compliant date."},
	}
	if t.Name != "nav_menu_item" && t.Name != "cms_block" {
		args = append(args,
			Arg{Name: "author", Type: ArgIntList, Description: "Limit result set to posts assigned to specific authors."},
			Arg{Name: "author_exclude", Type: ArgIntList, Description: "Ensure result set excludes posts assigned to specific authors."})
	}
	args = append(args,
		Arg{Name: "exclude", Type: ArgIntList, Description: "Ensure result set excludes specific IDs."},
		Arg{Name: "include", Type: ArgIntList, Description: "Limit result set to specific IDs."},
		Arg{Name: "offset", Type: ArgInt, Description: "Offset the result set by a specific number of items."},
		Arg{Name: "order", Type: ArgString, Default: t.DefaultOrder, Enum: []string{"asc", "desc"}, Description: "Order sort attribute ascending or descending."},
		Arg{Name: "orderby", Type: ArgString, Default: t.DefaultOrderBy, Enum: orderby, Description: "Sort collection by post attribute."},
		Arg{Name: "search_columns", Type: ArgStringList, Enum: []string{"post_title", "post_content", "post_excerpt"}, Description: "Array of column names to be searched."},
		Arg{Name: "search_semantics", Type: ArgString, Enum: []string{"exact"}, Description: "How to interpret the search input."},
		Arg{Name: "slug", Type: ArgStringList, Description: "Limit result set to posts with one or more specific slugs."},
	)
	if t.Name == TypeAttachment {
		args = append(args, Arg{Name: "status", Type: ArgStringList, Default: string(StatusInherit), Enum: []string{string(StatusInherit), "private", "trash"},
			Description: "Limit result set to posts assigned one or more statuses."})
	} else {
		args = append(args, Arg{Name: "status", Type: ArgStringList, Default: "publish", Enum: collectionStatuses, Description: "Limit result set to posts assigned one or more statuses."})
	}
	if len(t.Taxonomies) > 0 {
		args = append(args, Arg{Name: "tax_relation", Type: ArgString, Enum: []string{"AND", "OR"}, Description: "Limit result set based on relationship between multiple taxonomies."})
		for _, tax := range t.Taxonomies {
			children := tax == "categories"
			args = append(args,
				Arg{Name: tax, Type: ArgTermFilter, TermOperator: true, TermChildren: children, Description: "Limit result set to items with specific terms assigned in the " + tax + " taxonomy."},
				Arg{Name: tax + "_exclude", Type: ArgTermFilter, TermChildren: children, Description: "Limit result set to items except those with specific terms assigned in the " + tax + " taxonomy."})
		}
	}
	switch t.Name {
	case "post":
		args = append(args,
			Arg{Name: "sticky", Type: ArgBool, Description: "Limit result set to items that are sticky."},
			Arg{Name: "ignore_sticky", Type: ArgBool, Default: "true", Description: "Whether to ignore sticky posts or not."},
			Arg{Name: "format", Type: ArgStringList, Enum: PostFormats, Unique: true, Description: "Limit result set to items assigned one or more given formats."})
	case "page":
		args = append(args,
			Arg{Name: "menu_order", Type: ArgInt, Description: "Limit result set to posts with a specific menu_order value."},
			Arg{Name: "parent", Type: ArgIntList, Description: "Limit result set to items with particular parent IDs."},
			Arg{Name: "parent_exclude", Type: ArgIntList, Description: "Limit result set to all items except those of a particular parent ID."})
	case "nav_menu_item":
		args = append(args, Arg{Name: "menu_order", Type: ArgInt, Description: "Limit result set to posts with a specific menu_order value."})
	case TypeAttachment:
		args = append(args, mediaCollectionArgs()...) // routes_media.go
	}
	return args
}

// itemArgs are the arguments of a single record's GET: context, excerpt_length (types with an
// excerpt: a menu item has none) and password.
func (t *PostType) itemArgs() []Arg {
	args := []Arg{argContext}
	if t.Name == TypeAttachment {
		return args // no excerpt, no password
	}
	if t.Name != "nav_menu_item" {
		args = append(args, Arg{Name: "excerpt_length", Type: ArgInt, Description: "Override the default excerpt length."})
	}
	return append(args, Arg{Name: "password", Type: ArgString, Description: "The password for the post if it is password protected."})
}

// postTypeRoutes declares the collection and item routes of every post type. Anonymous reads of
// publicly readable types are answered by edges; everything else by the origin, whose handlers
// check the type's capabilities in WordPress's order.
func postTypeRoutes() []Route {
	var out []Route
	for _, t := range PostTypes {
		if t.OwnRoutes {
			continue
		}
		read := AtEdge
		if !t.PublicRead {
			read = AtOrigin
		}
		n := "cms." + t.RestBase
		col, item := t.Collection(), t.Collection()+"/{id}"
		out = append(out,
			Route{Name: n + ".list", Method: "GET", Interface: CMS, Path: col, Server: read, Args: t.collectionArgs(), Batch: true},
			Route{Name: n + ".create", Method: "POST", Interface: CMS, Path: col, Server: AtOrigin, Auth: AuthStaff, Cap: t.Caps.Edit, Batch: true},
			Route{Name: n + ".get", Method: "GET", Interface: CMS, Path: item, Server: read, Batch: true, Args: t.itemArgs()},
		)
		for _, m := range []string{"POST", "PUT", "PATCH"} {
			out = append(out, Route{Name: n + ".update", Method: m, Interface: CMS, Path: item, Server: AtOrigin, Auth: AuthStaff, Cap: t.Caps.Edit, Batch: true})
		}
		out = append(out, Route{Name: n + ".delete", Method: "DELETE", Interface: CMS, Path: item, Server: AtOrigin, Auth: AuthStaff, Cap: t.Caps.Delete, Batch: true,
			Args: []Arg{{Name: "force", Type: ArgBool, Default: "false", Description: "Whether to bypass Trash and force deletion."}}})
		out = append(out, t.revisionRoutes()...) // revisions.go
	}
	return out
}
