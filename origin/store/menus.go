package store

import (
	"context"
	"strconv"

	"github.com/jackc/pgx/v5"

	"vitrine/schema"
)

// Navigation menus: terms of taxonomy nav_menu (terms.go writes their rows) with an auto_add
// flag and the locations assigned to them (migration 0011). They are not replicated, so none of
// these writes takes a log version: the origin reads menus here, in the request's transaction.

// Menus returns every menu of the tenant with its locations, by id.
func (tx *Tx) Menus(ctx context.Context, t *schema.Tenant) ([]*schema.Menu, error) {
	return tx.queryMenus(ctx, t, `SELECT `+termColumns+`, auto_add FROM terms WHERE tenant_id = $1 AND taxonomy = 'nav_menu' ORDER BY id`)
}

// Menu returns one menu, or a not-found error when id is not a menu of the tenant.
func (tx *Tx) Menu(ctx context.Context, t *schema.Tenant, id schema.TermID) (*schema.Menu, error) {
	ms, err := tx.queryMenus(ctx, t, `SELECT `+termColumns+`, auto_add FROM terms
		WHERE tenant_id = $1 AND taxonomy = 'nav_menu' AND id = `+strconv.FormatInt(int64(id), 10))
	if err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		return nil, notFound("menu")
	}
	return ms[0], nil
}

func (tx *Tx) queryMenus(ctx context.Context, t *schema.Tenant, sql string) ([]*schema.Menu, error) {
	var out []*schema.Menu
	byID := map[schema.TermID]*schema.Menu{}
	err := eachRow(ctx, tx.pg, sql, func(row pgx.Row) error {
		var m schema.Menu
		if err := row.Scan(&m.ID, &m.Taxonomy, &m.Name, &m.Slug, &m.Description, &m.Parent, &m.Version, &m.AutoAdd); err != nil {
			return err
		}
		m.Locations = []string{}
		out = append(out, &m)
		byID[m.ID] = &m
		return nil
	}, t.ID)
	if err != nil || len(out) == 0 {
		return out, err
	}
	locs, err := tx.MenuLocations(ctx, t)
	if err != nil {
		return nil, err
	}
	for _, l := range schema.MenuLocations() { // in the platform's order
		if m := byID[locs[l.Name]]; m != nil {
			m.Locations = append(m.Locations, l.Name)
		}
	}
	return out, nil
}

// MenuLocations returns the menu assigned to each location that has one.
func (tx *Tx) MenuLocations(ctx context.Context, t *schema.Tenant) (map[string]schema.TermID, error) {
	out := map[string]schema.TermID{}
	err := eachRow(ctx, tx.pg, `SELECT location, menu_id FROM menu_locations WHERE tenant_id = $1`, func(row pgx.Row) error {
		var loc string
		var id int64
		if err := row.Scan(&loc, &id); err != nil {
			return err
		}
		out[loc] = schema.TermID(id)
		return nil
	}, t.ID)
	return out, err
}

// MenuItemCounts returns how many published menu items each menu holds (its term count, as
// WordPress counts nav_menu terms).
func (tx *Tx) MenuItemCounts(ctx context.Context, t *schema.Tenant) (map[schema.TermID]int, error) {
	out := map[schema.TermID]int{}
	err := eachRow(ctx, tx.pg, `SELECT (extra->'menu_item'->>'menus')::INT8, count(*) FROM posts
		WHERE tenant_id = $1 AND type = 'nav_menu_item' AND status = 'publish' AND extra->'menu_item'->>'menus' IS NOT NULL
		GROUP BY 1`, func(row pgx.Row) error {
		var id, n int64
		if err := row.Scan(&id, &n); err != nil {
			return err
		}
		out[schema.TermID(id)] = int(n)
		return nil
	}, t.ID)
	return out, err
}

// SaveMenuSettings writes a menu's auto_add flag and, when locations is not nil, makes them the
// menu's locations: the menu leaves the locations it had, and takes the listed ones from
// whichever menu held them (WordPress's handle_locations).
func (tx *Tx) SaveMenuSettings(ctx context.Context, t *schema.Tenant, id schema.TermID, autoAdd bool, locations []string) error {
	if _, err := tx.pg.Exec(ctx, `UPDATE terms SET auto_add = $3 WHERE tenant_id = $1 AND id = $2`, t.ID, int64(id), autoAdd); err != nil {
		return mapError(err)
	}
	if locations == nil {
		return nil
	}
	if _, err := tx.pg.Exec(ctx, `DELETE FROM menu_locations WHERE tenant_id = $1 AND menu_id = $2`, t.ID, int64(id)); err != nil {
		return mapError(err)
	}
	for _, l := range locations {
		_, err := tx.pg.Exec(ctx, `INSERT INTO menu_locations (tenant_id, location, menu_id) VALUES ($1, $2, $3)
			ON CONFLICT (tenant_id, location) DO UPDATE SET menu_id = excluded.menu_id`, t.ID, l, int64(id))
		if err != nil {
			return mapError(err)
		}
	}
	return nil
}

// DeleteMenu deletes a menu as WordPress's wp_delete_nav_menu does: its menu items are deleted
// for good (each a replicated change of this transaction, with their autosaves), then the term,
// and the locations it held are left without a menu. It returns the deleted items' ids.
func (tx *Tx) DeleteMenu(ctx context.Context, t *schema.Tenant, m *schema.Menu) ([]schema.PostID, error) {
	items, err := appendRows(ctx, tx.pg, nil, `SELECT id FROM posts WHERE tenant_id = $1 AND type = 'nav_menu_item'
		AND extra->'menu_item'->>'menus' = '`+strconv.FormatInt(int64(m.ID), 10)+`' ORDER BY id`, func(row pgx.Row) (schema.PostID, error) {
		var id int64
		err := row.Scan(&id)
		return schema.PostID(id), err
	}, t.ID)
	if err != nil {
		return nil, err
	}
	for _, id := range items {
		if _, err := tx.DeletePost(ctx, t, id); err != nil {
			return nil, err
		}
	}
	if _, err := tx.pg.Exec(ctx, `DELETE FROM menu_locations WHERE tenant_id = $1 AND menu_id = $2`, t.ID, int64(m.ID)); err != nil {
		return nil, mapError(err)
	}
	if _, err := tx.pg.Exec(ctx, `DELETE FROM terms WHERE tenant_id = $1 AND id = $2`, t.ID, int64(m.ID)); err != nil {
		return nil, mapError(err)
	}
	return items, nil
}
