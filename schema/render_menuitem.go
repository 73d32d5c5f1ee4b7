package schema

import "strconv"

// MenuItemView is a menu item as the CMS interface renders it (WordPress's menu-items
// controller). Pointer fields are present only in the contexts that show them.
type MenuItemView struct {
	ID          PostID             `json:"id"`
	Title       Rendered           `json:"title"`
	Status      *PostStatus        `json:"status,omitempty"`
	URL         string             `json:"url"`
	AttrTitle   *string            `json:"attr_title,omitempty"`
	Description *string            `json:"description,omitempty"`
	Type        *string            `json:"type,omitempty"`
	TypeLabel   *string            `json:"type_label,omitempty"`
	Object      *string            `json:"object,omitempty"`
	ObjectID    *int64             `json:"object_id,omitempty"`
	Parent      *PostID            `json:"parent,omitempty"`
	MenuOrder   *int               `json:"menu_order,omitempty"`
	Target      *string            `json:"target,omitempty"`
	Classes     *[]string          `json:"classes,omitempty"`
	XFN         *[]string          `json:"xfn,omitempty"`
	Invalid     *bool              `json:"invalid,omitempty"`
	Meta        *map[string]string `json:"meta,omitempty"`
	Menus       *TermID            `json:"menus,omitempty"`
	Links       map[string][]Link  `json:"_links,omitempty"`
}

var menuItemTypeLabels = map[string]string{"custom": "Custom Link", "post_type": "Post Type", "post_type_archive": "Post Type Archive", "taxonomy": "Taxonomy"}

// RenderMenuItem builds the CMS view of a menu item. Embed context keeps id, title, url,
// type, object and parent-free fields WordPress lists for it (id, title, url, …); view and
// edit show every field, edit adds title.raw.
func RenderMenuItem(p *Post, r PostRender, site Site) *MenuItemView {
	mi := p.MenuItem
	if mi == nil {
		mi = &MenuItem{Type: "custom"}
	}
	v := &MenuItemView{ID: p.ID, Title: Rendered{Rendered: p.Title}, URL: mi.URL}
	if r.Context == "edit" {
		v.Title.Raw = ptr(p.Title)
	}
	if r.Context != "embed" {
		classes, xfn := mi.Classes, mi.XFN
		if classes == nil {
			classes = []string{}
		}
		if xfn == nil {
			xfn = []string{}
		}
		v.Status = ptr(p.Status)
		v.AttrTitle, v.Description = ptr(mi.AttrTitle), ptr(mi.Description)
		v.Type, v.TypeLabel = ptr(mi.Type), ptr(menuItemTypeLabels[mi.Type])
		v.Object, v.ObjectID = ptr(mi.Object), ptr(mi.ObjectID)
		v.Parent, v.MenuOrder = ptr(p.Parent), ptr(p.MenuOrder)
		v.Target, v.Classes, v.XFN = ptr(mi.Target), &classes, &xfn
		v.Invalid = ptr(false)
		meta := map[string]string{}
		for k, val := range p.Meta {
			meta[k] = val
		}
		v.Meta = &meta
		v.Menus = ptr(mi.Menus)
	}
	t := PostTypeByName("nav_menu_item")
	v.Links = map[string][]Link{
		"self":       {{Href: site.RestURL(t.Item(p.ID)), TargetHints: SelfHints(r.Allow)}},
		"collection": {{Href: site.RestURL(t.Collection())}},
		"about":      {{Href: site.RestURL("/cms/v2/types/nav_menu_item")}},
		"curies":     {{Name: "wp", Href: "https://api.w.org/{rel}", Templated: true}},
	}
	if mi.Menus != 0 {
		v.Links["wp:term"] = []Link{{Href: site.RestURL("/cms/v2/menus") + "&post=" + strconv.FormatInt(int64(p.ID), 10), Taxonomy: "nav_menu", Embeddable: true}}
	}
	return v
}

// RenderRecord renders any record of the post id space in its type's shape: menu items as
// MenuItemView, every other type as PostView.
func RenderRecord(p *Post, r PostRender, site Site) any {
	if p.Type == "nav_menu_item" {
		return RenderMenuItem(p, r, site)
	}
	return RenderPost(p, r, site)
}
