package origin

import (
	"context"
	"strings"

	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
)

// newRecord is a new record of a post type with WordPress's defaults: drafts, except menu
// items, which are published (and ordered first) unless the request says otherwise.
func newRecord(t *schema.PostType, author schema.UserID) *schema.Post {
	p := &schema.Post{Type: t.Name, Status: schema.StatusDraft, Author: author, CommentStatus: "open", PingStatus: "open", Format: "standard"}
	switch t.Name {
	case "page", "cms_block", "cms_navigation", "nav_menu_item":
		p.CommentStatus, p.PingStatus = "closed", "closed"
	}
	if t.Name == "nav_menu_item" {
		p.Status, p.MenuOrder, p.MenuItem = schema.StatusPublish, 1, &schema.MenuItem{Type: "custom"}
	}
	return p
}

// checkTypeFields applies the rules of one post type to a record about to be written: a page's
// parent must be a page; a menu item needs a title and a URL when it is a custom link, a
// menu_order of at least 1, and its parent must be a menu item.
func checkTypeFields(ctx context.Context, rq *handler.Request, tx *store.Tx, p *schema.Post) error {
	t := schema.PostTypeByName(p.Type)
	if p.Parent != 0 {
		if !t.Hierarchical && p.Type != "nav_menu_item" {
			p.Parent = 0
		} else {
			parent, err := tx.Post(ctx, rq.Info, p.Parent)
			if schema.ErrorCode(err) == schema.CodeNotFound || err == nil && (parent.Type != p.Type || parent.ID == p.ID) {
				return &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_post_invalid_id", Field: "parent", Message: "Invalid post parent ID."}
			}
			if err != nil {
				return err
			}
		}
	}
	if p.Type != "nav_menu_item" {
		return nil
	}
	if p.MenuOrder < 1 {
		return schema.InvalidParam("menu_order", "menu_order must be greater than or equal to 1")
	}
	mi := p.MenuItem
	if mi.Type == "custom" {
		if strings.TrimSpace(p.Title) == "" {
			return &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_title_required", Field: "title", Message: "The title cannot be empty."}
		}
		if strings.TrimSpace(mi.URL) == "" {
			return &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_url_required", Field: "url", Message: "The url cannot be empty."}
		}
	}
	if mi.Type == "post_type" {
		target, err := tx.Post(ctx, rq.Info, schema.PostID(mi.ObjectID))
		if schema.ErrorCode(err) == schema.CodeNotFound || mi.ObjectID == 0 {
			return &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_post_invalid_id", Field: "object_id", Message: "Invalid post ID."}
		}
		if err != nil {
			return err
		}
		if mi.Object == "" {
			mi.Object = target.Type
		}
		if mi.Object != target.Type {
			return &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_post_invalid_type", Field: "object", Message: "Invalid post type."}
		}
	}
	// A menu item belongs to an existing menu, or to none (0): wp_update_nav_menu_item's check, after
	// the item's own fields.
	if mi.Menus != 0 {
		if _, err := tx.Menu(ctx, rq.Info, mi.Menus); schema.ErrorCode(err) == schema.CodeNotFound {
			return &schema.Error{Code: schema.CodeInvalid, CMSCode: "invalid_menu_id", Field: "menus", Status: 400, Message: "Invalid menu ID."}
		} else if err != nil {
			return err
		}
	}
	return nil
}
