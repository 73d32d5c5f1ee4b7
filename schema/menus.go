package schema

import (
	"html"
	"strconv"
)

// Navigation menus (WordPress's nav_menu taxonomy, REST base "menus"): terms of the terms table
// that group menu items (a menu item's "menus" field). Unlike categories and tags they are not
// public: WordPress lets only users who can edit posts read them, so they are not replicated at
// all and the origin reads them from the database (origin/menus.go).

// TaxNavMenu is the taxonomy of navigation menus.
const TaxNavMenu = "nav_menu"

// MenuLocation is a place of the storefront where a menu can be shown: a theme's registered
// nav menu location in WordPress (register_nav_menus).
type MenuLocation struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// MenuLocations returns the menu locations every store has. A headless storefront has no
// theme: these are the places storefront clients render menus, declared by the platform.
func MenuLocations() []MenuLocation {
	return []MenuLocation{
		{Name: "primary", Description: "Primary menu"},
		{Name: "footer", Description: "Footer menu"},
	}
}

// IsMenuLocation reports whether name is one of MenuLocations.
func IsMenuLocation(name string) bool {
	for _, l := range MenuLocations() {
		if l.Name == name {
			return true
		}
	}
	return false
}

// Menu is a navigation menu: its term, the auto_add flag (new top-level pages are added to the
// menu when published, as WordPress's nav_menu_options) and the locations assigned to it (each
// location holds at most one menu, as WordPress's nav_menu_locations theme mod).
type Menu struct {
	Term
	AutoAdd   bool
	Locations []string
}

// MenuView is a menu as the CMS interface renders it (WordPress's menus controller: the terms
// fields without count, link and taxonomy, plus locations and auto_add). Pointer fields are
// absent in the embed context.
type MenuView struct {
	ID          TermID            `json:"id"`
	Description *string           `json:"description,omitempty"`
	Name        string            `json:"name"`
	Slug        string            `json:"slug"`
	Meta        *[]any            `json:"meta,omitempty"`
	Locations   *[]string         `json:"locations,omitempty"`
	AutoAdd     *bool             `json:"auto_add,omitempty"`
	Links       map[string][]Link `json:"_links,omitempty"`
}

// RenderMenu renders a menu in a context (view, embed or edit; edit shows the view fields).
// allow lists the methods the caller may use on it (the self link's targetHints).
func RenderMenu(m *Menu, context string, allow []string, site Site) *MenuView {
	id := strconv.FormatInt(int64(m.ID), 10)
	v := &MenuView{ID: m.ID, Name: html.EscapeString(m.Name), Slug: m.Slug}
	if allow == nil {
		allow = []string{"GET"}
	}
	v.Links = map[string][]Link{
		"self":         {{Href: site.RestURL("/cms/v2/menus/" + id), TargetHints: map[string]any{"allow": allow}}},
		"collection":   {{Href: site.RestURL("/cms/v2/menus")}},
		"about":        {{Href: site.RestURL("/cms/v2/taxonomies/" + TaxNavMenu)}},
		"wp:post_type": {{Href: site.RestURL("/cms/v2/menu-items") + "&menus=" + id}},
		"curies":       {{Name: "wp", Href: "https://api.w.org/{rel}", Templated: true}},
	}
	for _, l := range m.Locations {
		v.Links["wp:menu-location"] = append(v.Links["wp:menu-location"], Link{Href: site.RestURL("/cms/v2/menu-locations/" + l), Embeddable: true})
	}
	if context == "embed" {
		return v
	}
	desc, meta, auto := m.Description, []any{}, m.AutoAdd
	locations := append([]string{}, m.Locations...)
	v.Description, v.Meta, v.Locations, v.AutoAdd = &desc, &meta, &locations, &auto
	return v
}

// menuSchema is the schema of navigation menus (OPTIONS on /cms/v2/menus).
func menuSchema() jsonObject {
	p := jsonObject{
		{"id", readonly(prop("Unique identifier for the term.", "integer", ctxAll))},
		{"description", prop("HTML description of the term.", "string", ctxVE)},
		{"name", prop("HTML title for the term.", "string", ctxAll)},
		{"slug", prop("An alphanumeric identifier for the term unique to its type.", "string", ctxAll)},
		{"meta", prop("Meta fields.", "object", ctxVE, jsonMember{"properties", jsonObject{}})},
		{"locations", prop("The locations assigned to the menu.", "array", ctxVE, jsonMember{"items", map[string]string{"type": "string"}})},
		{"auto_add", prop("Whether to automatically add top level pages to this menu.", "boolean", ctxVE)},
	}
	return itemSchema(TaxNavMenu, p)
}

// menuLocationSchema is the schema of menu locations (OPTIONS on /cms/v2/menu-locations).
func menuLocationSchema() jsonObject {
	p := jsonObject{
		{"name", readonly(prop("The name of the menu location.", "string", ctxAll))},
		{"description", readonly(prop("The description of the menu location.", "string", ctxAll))},
		{"menu", readonly(prop("The ID of the assigned menu.", "integer", ctxAll))},
	}
	return itemSchema("menu-location", p)
}

// MenuLocationView is a menu location as the CMS interface renders it.
type MenuLocationView struct {
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Menu        TermID            `json:"menu"`
	Links       map[string][]Link `json:"_links,omitempty"`
}

// RenderMenuLocation renders a location and the menu assigned to it (0: none).
func RenderMenuLocation(l MenuLocation, menu TermID, site Site) *MenuLocationView {
	v := &MenuLocationView{Name: l.Name, Description: l.Description, Menu: menu}
	v.Links = map[string][]Link{
		"self":       {{Href: site.RestURL("/cms/v2/menu-locations/" + l.Name)}},
		"collection": {{Href: site.RestURL("/cms/v2/menu-locations")}},
		"curies":     {{Name: "wp", Href: "https://api.w.org/{rel}", Templated: true}},
	}
	if menu != 0 {
		v.Links["wp:menu"] = []Link{{Href: site.RestURL("/cms/v2/menus/" + strconv.FormatInt(int64(menu), 10)), Embeddable: true}}
	}
	return v
}

// RenderMenuLocations renders every location, keyed by name in the platform's order, as
// WordPress answers its menu locations collection (an object, not a list). assigned maps each
// location to its menu.
func RenderMenuLocations(assigned map[string]TermID, site Site) any {
	out := jsonObject{}
	for _, l := range MenuLocations() {
		out = append(out, jsonMember{l.Name, RenderMenuLocation(l, assigned[l.Name], site)})
	}
	return out
}
