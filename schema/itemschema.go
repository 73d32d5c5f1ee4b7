package schema

import "strings"

// Item schemas: the JSON schema of the resource a CMS route serves, which WordPress adds as
// "schema" to a route's OPTIONS answer (context=help). Each property names its type, the
// contexts that show it and whether it is read-only, in the order WordPress's controllers
// declare them; the fields are the ones the render functions write (render_cms.go,
// render_menuitem.go, terms.go, users_cms.go).

var (
	ctxAll  = []string{"view", "edit", "embed"}
	ctxVE   = []string{"view", "edit"}
	ctxEdit = []string{"edit"}
)

// prop is one property of an item schema.
func prop(desc string, typ any, ctx []string, extra ...jsonMember) jsonObject {
	o := jsonObject{{"description", desc}, {"type", typ}}
	o = append(o, extra...)
	return append(o, jsonMember{"context", ctx})
}

func readonly(o jsonObject) jsonObject { return append(o, jsonMember{"readonly", true}) }

// rawRendered is WordPress's {raw, rendered} object property; more adds members such as
// protected or block_version.
func rawRendered(desc, what string, ctx []string, more ...jsonMember) jsonObject {
	props := jsonObject{
		{"raw", prop("Original "+what+", as it exists in the database.", "string", ctxEdit)},
		{"rendered", readonly(prop("HTML "+what+", transformed for display.", "string", ctx))},
	}
	props = append(props, more...)
	return prop(desc, "object", ctx, jsonMember{"properties", props})
}

var statusEnum = []string{"publish", "future", "draft", "pending", "private"}

// postItemSchema is the schema of one post type's records.
func postItemSchema(t *PostType) jsonObject {
	word := strings.TrimPrefix(strings.TrimPrefix(t.Name, "cms_"), "nav_")
	if t.Name == "nav_menu_item" {
		return menuItemSchema()
	}
	p := jsonObject{
		{"date", prop("The date the "+word+" was published, in the site's timezone.", []string{"string", "null"}, ctxAll, jsonMember{"format", "date-time"})},
		{"date_gmt", prop("The date the "+word+" was published, as GMT.", []string{"string", "null"}, ctxVE, jsonMember{"format", "date-time"})},
		{"guid", readonly(prop("The globally unique identifier for the "+word+".", "object", ctxVE, jsonMember{"properties", jsonObject{
			{"raw", readonly(prop("GUID for the "+word+", as it exists in the database.", "string", ctxEdit))},
			{"rendered", readonly(prop("GUID for the "+word+", transformed for display.", "string", ctxVE))},
		}}))},
		{"id", readonly(prop("Unique identifier for the "+word+".", "integer", ctxAll))},
		{"link", readonly(prop("URL to the "+word+".", "string", ctxAll, jsonMember{"format", "uri"}))},
		{"modified", readonly(prop("The date the "+word+" was last modified, in the site's timezone.", "string", ctxVE, jsonMember{"format", "date-time"}))},
		{"modified_gmt", readonly(prop("The date the "+word+" was last modified, as GMT.", "string", ctxVE, jsonMember{"format", "date-time"}))},
		{"slug", prop("An alphanumeric identifier for the "+word+" unique to its type.", "string", ctxAll)},
		{"status", prop("A named status for the "+word+".", "string", ctxVE, jsonMember{"enum", statusEnum})},
		{"type", readonly(prop("Type of "+word+".", "string", ctxAll))},
	}
	media := t.Name == TypeAttachment // no password, content or excerpt; its own fields last
	if !media {
		p = append(p, jsonMember{"password", prop("A password to protect access to the content and excerpt.", "string", ctxEdit)})
	}
	p = append(p,
		jsonMember{"permalink_template", readonly(prop("Permalink template for the "+word+".", "string", ctxEdit))},
		jsonMember{"generated_slug", readonly(prop("Slug automatically generated from the "+word+" title.", "string", ctxEdit))},
		jsonMember{"class_list", readonly(prop("An array of the class names for the "+word+" container element.", "array", ctxVE,
			jsonMember{"items", map[string]string{"type": "string"}}))})
	if t.Hierarchical {
		p = append(p,
			jsonMember{"parent", prop("The ID for the parent of the "+word+".", "integer", ctxVE)},
			jsonMember{"menu_order", prop("The order of the "+word+" in relation to other posts.", "integer", ctxVE)})
	}
	if t.Name == "cms_block" {
		// Blocks show their raw title and content in every context.
		p = append(p, jsonMember{"title", prop("The title for the "+word+".", "object", ctxAll, jsonMember{"properties", jsonObject{
			{"raw", prop("Title for the "+word+", as it exists in the database.", "string", ctxAll)},
		}})})
	} else {
		p = append(p, jsonMember{"title", rawRendered("The title for the "+word+".", "title", ctxAll)})
	}
	contentCtx := ctxVE
	if t.Name == "cms_block" {
		contentCtx = ctxAll
	}
	authored := t.Name == "post" || t.Name == "page" || media
	if !media {
		p = append(p, jsonMember{"content", rawRendered("The content for the "+word+".", "content", contentCtx,
			jsonMember{"block_version", readonly(prop("Version of the content block format used by the "+word+".", "integer", ctxEdit))},
			jsonMember{"protected", readonly(prop("Whether the content is protected with a password.", "boolean", contentCtx))})})
	}
	if authored {
		p = append(p, jsonMember{"author", prop("The ID for the author of the "+word+".", "integer", ctxAll)})
	}
	if !media {
		p = append(p, jsonMember{"excerpt", rawRendered("The excerpt for the "+word+".", "excerpt", ctxAll,
			jsonMember{"protected", readonly(prop("Whether the excerpt is protected with a password.", "boolean", ctxAll))})})
	}
	if authored {
		p = append(p,
			jsonMember{"featured_media", prop("The ID of the featured media for the "+word+".", "integer", ctxAll)},
			jsonMember{"comment_status", prop("Whether or not comments are open on the "+word+".", "string", ctxVE, jsonMember{"enum", []string{"open", "closed"}})},
			jsonMember{"ping_status", prop("Whether or not the "+word+" can be pinged.", "string", ctxVE, jsonMember{"enum", []string{"open", "closed"}})})
	}
	if t.Name == "post" {
		p = append(p, jsonMember{"format", prop("The format for the "+word+".", "string", ctxVE,
			jsonMember{"enum", []string{"standard", "aside", "chat", "gallery", "link", "image", "quote", "status", "video", "audio"}})})
	}
	{
		meta := jsonObject{{"footnotes", prop("", "string", ctxVE, jsonMember{"default", ""})}}
		if media {
			meta = jsonObject{}
		}
		if t.Name == "cms_block" {
			meta = append(jsonObject{{"cms_pattern_sync_status", prop("", "string", ctxVE,
				jsonMember{"default", ""}, jsonMember{"enum", []string{"partial", "unsynced"}})}}, meta...)
		}
		p = append(p, jsonMember{"meta", prop("Meta fields.", "object", ctxVE, jsonMember{"properties", meta})})
	}
	if t.Name == "post" {
		p = append(p, jsonMember{"sticky", prop("Whether or not the "+word+" should be treated as sticky.", "boolean", ctxVE)})
	}
	p = append(p, jsonMember{"template", prop("The theme file to use to display the "+word+".", "string", ctxVE)})
	for _, tax := range t.Taxonomies {
		p = append(p, jsonMember{tax, prop("The terms assigned to the "+word+" in the "+tax+" taxonomy.", "array", ctxVE,
			jsonMember{"items", map[string]string{"type": "integer"}})})
	}
	if media {
		p = append(p, mediaSchemaProps()...)
	}
	return itemSchema(t.Name, p)
}

// mediaSchemaProps are the properties WordPress's attachments controller adds to the posts
// controller's (render_media.go writes them).
func mediaSchemaProps() jsonObject {
	return jsonObject{
		{"alt_text", prop("Alternative text to display when attachment is not displayed.", "string", ctxAll)},
		{"caption", prop("The attachment caption.", "object", ctxAll, jsonMember{"properties", jsonObject{
			{"raw", prop("Caption for the attachment, as it exists in the database.", "string", ctxEdit)},
			{"rendered", readonly(prop("HTML caption for the attachment, transformed for display.", "string", ctxAll))},
		}})},
		{"description", prop("The attachment description.", "object", ctxVE, jsonMember{"properties", jsonObject{
			{"raw", prop("Description for the attachment, as it exists in the database.", "string", ctxEdit)},
			{"rendered", readonly(prop("HTML description for the attachment, transformed for display.", "string", ctxVE))},
		}})},
		{"media_type", readonly(prop("Attachment type.", "string", ctxAll, jsonMember{"enum", []string{"image", "file"}}))},
		{"mime_type", readonly(prop("The attachment MIME type.", "string", ctxAll))},
		{"media_details", readonly(prop("Details about the media file, specific to its type.", "object", ctxAll))},
		{"post", prop("The ID for the associated post of the attachment.", "integer", ctxVE)},
		{"source_url", readonly(prop("URL to the original attachment file.", "string", ctxAll, jsonMember{"format", "uri"}))},
		{"missing_image_sizes", readonly(prop("List of the missing image sizes of the attachment.", "array", ctxEdit,
			jsonMember{"items", map[string]string{"type": "string"}}))},
		{"filename", readonly(prop("Original attachment file name.", "string", ctxVE))},
		{"filesize", readonly(prop("Attachment file size in bytes.", []string{"integer", "null"}, ctxVE))},
	}
}

func menuItemSchema() jsonObject {
	word := "object"
	p := jsonObject{
		{"title", rawRendered("The title for the "+word+".", "title", ctxAll)},
		{"id", readonly(prop("Unique identifier for the "+word+".", "integer", ctxAll))},
		{"type_label", readonly(prop("The singular label used to describe this type of menu item.", "string", ctxAll))},
		{"type", prop("The family of objects originally represented, such as \"post_type\" or \"taxonomy\".", "string", ctxAll,
			jsonMember{"enum", []string{"taxonomy", "post_type", "post_type_archive", "custom"}})},
		{"status", prop("A named status for the object.", "string", ctxVE, jsonMember{"enum", statusEnum}, jsonMember{"default", "publish"})},
		{"parent", prop("The ID for the parent of the object.", "integer", ctxAll, jsonMember{"minimum", 0}, jsonMember{"default", 0})},
		{"attr_title", prop("Text for the title attribute of the link element for this menu item.", "string", ctxAll)},
		{"classes", prop("Class names for the link element of this menu item.", "array", ctxAll, jsonMember{"items", map[string]string{"type": "string"}})},
		{"description", prop("The description of this menu item.", "string", ctxAll)},
		{"menu_order", prop("The DB ID of the nav_menu_item that is this item's menu parent, if any, otherwise 0.", "integer", ctxAll,
			jsonMember{"minimum", 1}, jsonMember{"default", 1})},
		{"object", prop("The type of object originally represented, such as \"category\", \"post\", or \"attachment\".", "string", ctxAll)},
		{"object_id", prop("The database ID of the original object this menu item represents, for example the ID for posts or the term_id for categories.", "integer", ctxAll,
			jsonMember{"minimum", 0}, jsonMember{"default", 0})},
		{"target", prop("The target attribute of the link element for this menu item.", "string", ctxAll, jsonMember{"enum", []string{"_blank", ""}})},
		{"url", prop("The URL to which this menu item points.", "string", ctxAll, jsonMember{"format", "uri"})},
		{"xfn", prop("The XFN relationship expressed in the link of this menu item.", "array", ctxAll, jsonMember{"items", map[string]string{"type": "string"}})},
		{"invalid", readonly(prop("Whether the menu item represents an object that no longer exists.", "boolean", ctxAll))},
		{"menus", prop("The terms assigned to the object in the nav_menu taxonomy.", "integer", ctxVE)},
		{"meta", prop("Meta fields.", "object", ctxVE, jsonMember{"properties", jsonObject{}})},
	}
	return itemSchema("nav_menu_item", p)
}

// termItemSchema is the schema of a taxonomy's terms.
func termItemSchema(tax string) jsonObject {
	p := jsonObject{
		{"id", readonly(prop("Unique identifier for the term.", "integer", ctxAll))},
		{"count", readonly(prop("Number of published posts for the term.", "integer", ctxVE))},
		{"description", prop("HTML description of the term.", "string", ctxVE)},
		{"link", readonly(prop("URL of the term.", "string", ctxAll, jsonMember{"format", "uri"}))},
		{"name", prop("HTML title for the term.", "string", ctxAll)},
		{"slug", prop("An alphanumeric identifier for the term unique to its type.", "string", ctxAll)},
		{"taxonomy", readonly(prop("Type attribution for the term.", "string", ctxAll, jsonMember{"enum", []string{tax}}))},
	}
	if tax == TaxCategory {
		p = append(p, jsonMember{"parent", prop("The parent term ID.", "integer", ctxVE)})
	}
	p = append(p, jsonMember{"meta", prop("Meta fields.", "object", ctxVE, jsonMember{"properties", jsonObject{}})})
	return itemSchema(tax, p)
}

// userItemSchema is the schema of staff users.
func userItemSchema() jsonObject {
	roles := make([]string, 0, len(roleCaps))
	for _, r := range []Role{RoleAdministrator, RoleEditor, RoleAuthor, RoleContributor, RoleSubscriber, RoleShopManager} {
		roles = append(roles, string(r))
	}
	p := jsonObject{
		{"id", readonly(prop("Unique identifier for the user.", "integer", ctxAll))},
		{"username", prop("Login name for the user.", "string", ctxEdit, jsonMember{"required", true})},
		{"name", prop("Display name for the user.", "string", ctxAll)},
		{"first_name", prop("First name for the user.", "string", ctxEdit)},
		{"last_name", prop("Last name for the user.", "string", ctxEdit)},
		{"email", prop("The email address for the user.", "string", ctxEdit, jsonMember{"format", "email"}, jsonMember{"required", true})},
		{"url", prop("URL of the user.", "string", ctxAll, jsonMember{"format", "uri"})},
		{"description", prop("Description of the user.", "string", ctxAll)},
		{"link", readonly(prop("Author URL of the user.", "string", ctxAll, jsonMember{"format", "uri"}))},
		{"locale", prop("Locale for the user.", "string", ctxEdit, jsonMember{"enum", []string{"", "en_US"}})},
		{"nickname", prop("The nickname for the user.", "string", ctxEdit)},
		{"slug", prop("An alphanumeric identifier for the user.", "string", ctxAll)},
		{"registered_date", readonly(prop("Registration date for the user.", "string", ctxEdit, jsonMember{"format", "date-time"}))},
		{"roles", prop("Roles assigned to the user.", "array", ctxEdit, jsonMember{"items", map[string]any{"type": "string", "enum": roles}})},
		{"password", prop("Password for the user (never included).", "string", []string{}, jsonMember{"required", true})},
		{"capabilities", readonly(prop("All capabilities assigned to the user.", "object", ctxEdit))},
		{"extra_capabilities", readonly(prop("Any extra capabilities assigned to the user.", "object", ctxEdit))},
		{"avatar_urls", readonly(prop("Avatar URLs for the user.", "object", ctxAll, jsonMember{"properties", jsonObject{
			{"24", prop("Avatar URL with image size of 24 pixels.", "string", ctxAll, jsonMember{"format", "uri"})},
			{"48", prop("Avatar URL with image size of 48 pixels.", "string", ctxAll, jsonMember{"format", "uri"})},
			{"96", prop("Avatar URL with image size of 96 pixels.", "string", ctxAll, jsonMember{"format", "uri"})},
		}}))},
		{"meta", prop("Meta fields.", "object", ctxVE, jsonMember{"properties", jsonObject{}})},
	}
	return itemSchema("user", p)
}

// appPasswordItemSchema is the schema of application passwords.
func appPasswordItemSchema() jsonObject {
	p := jsonObject{
		{"uuid", readonly(prop("The unique identifier for the application password.", "string", ctxAll, jsonMember{"format", "uuid"}))},
		{"app_id", prop("A UUID provided by the application to uniquely identify it. It is recommended to use an UUID v5 with the URL or DNS namespace.", "string", ctxAll, jsonMember{"format", "uuid"})},
		{"name", prop("The name of the application password.", "string", ctxAll, jsonMember{"required", true}, jsonMember{"minLength", 1}, jsonMember{"pattern", ".*\\S.*"})},
		{"password", readonly(prop("The generated password. Only available after adding an application.", "string", ctxEdit))},
		{"created", readonly(prop("The GMT date the application password was created.", "string", ctxVE, jsonMember{"format", "date-time"}))},
		{"last_used", readonly(prop("The GMT date the application password was last used.", []string{"string", "null"}, ctxVE, jsonMember{"format", "date-time"}))},
		{"last_ip", readonly(prop("The IP address the application password was last used by.", []string{"string", "null"}, ctxVE, jsonMember{"format", "ip"}))},
	}
	return itemSchema("application-password", p)
}

func itemSchema(title string, props jsonObject) jsonObject {
	return jsonObject{{"$schema", "http://json-schema.org/draft-04/schema#"}, {"title", title}, {"type", "object"}, {"properties", props}}
}

// routeItemSchema returns the item schema of the resource a CMS route path serves, or nil for
// routes without one (the index, namespace roots, batch).
func routeItemSchema(path string) jsonObject {
	if sch := templateRouteSchema(path); sch != nil { // templates and template parts: render_template.go
		return sch
	}
	if sch, ok := designRouteSchema(path); ok { // global styles and themes: globalstyles.go
		return sch
	}
	for _, t := range PostTypes {
		if c := t.Collection(); path == c || path == c+"/{id}" {
			return postItemSchema(t)
		}
		if sch := revisionItemSchema(t, path); sch != nil { // revisions.go
			return sch
		}
	}
	switch {
	case path == "/cms/v2/categories" || path == "/cms/v2/categories/{id}":
		return termItemSchema(TaxCategory)
	case path == "/cms/v2/tags" || path == "/cms/v2/tags/{id}":
		return termItemSchema(TaxTag)
	case path == "/cms/v2/menus" || path == "/cms/v2/menus/{id}":
		return menuSchema() // menus.go
	case path == "/cms/v2/menu-locations" || path == "/cms/v2/menu-locations/{location}":
		return menuLocationSchema()
	case strings.HasPrefix(path, "/cms/v2/users/") && strings.Contains(path, "/application-passwords"):
		return appPasswordItemSchema()
	case path == "/cms/v2/users" || strings.HasPrefix(path, "/cms/v2/users/"):
		return userItemSchema()
	}
	return nil
}
