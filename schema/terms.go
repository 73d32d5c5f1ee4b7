package schema

import (
	"cmp"
	"html"
	"slices"
	"strconv"
	"strings"
)

// KindTerm is a CMS term (a category or a tag). Terms are public: only the pub state is
// replicated, and edges answer anonymous term reads alone.
const KindTerm Kind = "term"

// Taxonomies of CMS terms, with WordPress's names.
const (
	TaxCategory = "category"
	TaxTag      = "post_tag"
)

// TaxonomyBase returns the REST base of a taxonomy ("categories", "tags").
func TaxonomyBase(tax string) string {
	if tax == TaxCategory {
		return "categories"
	}
	return "tags"
}

// Term is a category or a tag of a tenant's CMS. Terms have their own per-tenant id space
// (ARCHITECTURE 2.3). A term's post count is not stored: readers count the published posts of
// their replica that carry the term, so it is right after any post change without a term write.
type Term struct {
	ID          TermID `json:"id"`
	Taxonomy    string `json:"taxonomy"`
	Name        string `json:"name"`
	Slug        string `json:"slug"`
	Description string `json:"description"`
	// Parent is 0 or a category of the same taxonomy (tags have no parent).
	Parent  TermID `json:"parent"`
	Version int64  `json:"version"`
}

// ValidateTerm checks a term before it is written.
func ValidateTerm(t *Term) error {
	if t.Taxonomy != TaxCategory && t.Taxonomy != TaxTag && t.Taxonomy != TaxNavMenu {
		return Invalid("taxonomy", "taxonomy must be category, post_tag or nav_menu")
	}
	if err := ValidateText("name", t.Name, 200, true); err != nil {
		return err
	}
	if err := ValidateText("description", t.Description, 10000, false); err != nil {
		return err
	}
	if err := ValidateSlug("slug", t.Slug, nil); err != nil {
		return err
	}
	if t.Parent < 0 || t.Parent > MaxExposedID || (t.Taxonomy != TaxCategory && t.Parent != 0) {
		return Invalid("parent", "parent is not a valid term")
	}
	return nil
}

// TermView is a term as the CMS interface renders it, in WordPress's field order. Pointer fields
// are absent in the embed context.
type TermView struct {
	ID          TermID            `json:"id"`
	Count       *int              `json:"count,omitempty"`
	Description *string           `json:"description,omitempty"`
	Link        string            `json:"link"`
	Name        string            `json:"name"`
	Slug        string            `json:"slug"`
	Taxonomy    string            `json:"taxonomy"`
	Parent      *TermID           `json:"parent,omitempty"`
	Meta        *[]any            `json:"meta,omitempty"`
	Links       map[string][]Link `json:"_links,omitempty"`
}

// TermLink is the public archive URL of a term under plain permalinks.
func (s Site) TermLink(t *Term) string {
	if t.Taxonomy == TaxCategory {
		return s.Base + "/?cat=" + strconv.FormatInt(int64(t.ID), 10)
	}
	return s.Base + "/?tag=" + t.Slug
}

// RenderTerm renders a term in a context (view, embed or edit; edit shows the same fields as
// view). count is the number of published posts carrying the term. allow lists the methods
// the caller may use on the item (the self link's targetHints).
func RenderTerm(t *Term, context string, count int, allow []string, site Site) *TermView {
	v := &TermView{ID: t.ID, Link: site.TermLink(t), Name: html.EscapeString(t.Name), Slug: t.Slug, Taxonomy: t.Taxonomy}
	base := "/cms/v2/" + TaxonomyBase(t.Taxonomy)
	id := strconv.FormatInt(int64(t.ID), 10)
	v.Links = map[string][]Link{
		"self":         {{Href: site.RestURL(base + "/" + id), TargetHints: SelfHints(allow)}},
		"collection":   {{Href: site.RestURL(base)}},
		"about":        {{Href: site.RestURL("/cms/v2/taxonomies/" + t.Taxonomy)}},
		"wp:post_type": {{Href: site.RestURL("/cms/v2/posts") + "&" + TaxonomyBase(t.Taxonomy) + "=" + id}},
		"curies":       {{Name: "wp", Href: "https://api.w.org/{rel}", Templated: true}},
	}
	if t.Parent != 0 {
		v.Links["up"] = []Link{{Href: site.RestURL(base + "/" + strconv.FormatInt(int64(t.Parent), 10)), Embeddable: true}}
	}
	if context == "embed" {
		return v
	}
	desc := t.Description
	meta := []any{}
	v.Count, v.Description, v.Meta = &count, &desc, &meta
	if t.Taxonomy == TaxCategory {
		p := t.Parent
		v.Parent = &p
	}
	return v
}

// TermOrder is what a terms collection's orderby compares of one term (categories, tags, menus).
type TermOrder struct {
	ID                      TermID
	Name, Slug, Description string
	// Count is the term's number of published records.
	Count int
}

// CompareTerms orders two terms as a terms collection does: by orderby (name, case-insensitively,
// by default; id, slug, count, description, include in the include list's order, include_slugs
// in the slug list's order, term_group, where every term is in group 0), reversed by desc, ties
// broken by id ascending.
func CompareTerms(orderby string, desc bool, include []int64, slugs []string, a, b TermOrder) int {
	position := func(list []int64, x int64) int {
		if i := slices.Index(list, x); i >= 0 {
			return i
		}
		return len(list)
	}
	var c int
	switch orderby {
	case "id":
		c = cmp.Compare(a.ID, b.ID)
	case "slug":
		c = strings.Compare(a.Slug, b.Slug)
	case "count":
		c = cmp.Compare(a.Count, b.Count)
	case "description":
		c = strings.Compare(strings.ToLower(a.Description), strings.ToLower(b.Description))
	case "include":
		c = cmp.Compare(position(include, int64(a.ID)), position(include, int64(b.ID)))
	case "include_slugs":
		c = cmp.Compare(slices.Index(slugs, a.Slug), slices.Index(slugs, b.Slug))
	case "term_group":
	default:
		c = strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name))
	}
	if desc {
		c = -c
	}
	return cmp.Or(c, cmp.Compare(a.ID, b.ID))
}

// TermFilter is the part of a terms collection's arguments every taxonomy shares (categories,
// tags, menus): include, exclude, slug, search and hide_empty.
type TermFilter struct {
	Include, Exclude []int64
	Slugs            []string
	Search           string // lowercased
	HideEmpty        bool
}

// TermFilterOf reads a terms collection's shared filter from its arguments.
func TermFilterOf(args *Args) TermFilter {
	return TermFilter{Include: args.Get("include").Ints, Exclude: args.Get("exclude").Ints, Slugs: args.Get("slug").Strs,
		Search: strings.ToLower(args.Str("search")), HideEmpty: args.Bool("hide_empty")}
}

// Keeps reports whether a term passes the filter: among include when given, not in exclude,
// among the slugs when given, its name or slug containing the search, and in use when
// hide_empty.
func (f TermFilter) Keeps(t TermOrder) bool {
	switch {
	case len(f.Include) > 0 && !slices.Contains(f.Include, int64(t.ID)),
		slices.Contains(f.Exclude, int64(t.ID)),
		len(f.Slugs) > 0 && !slices.Contains(f.Slugs, t.Slug),
		f.Search != "" && !strings.Contains(strings.ToLower(t.Name), f.Search) && !strings.Contains(t.Slug, f.Search),
		f.HideEmpty && t.Count == 0:
		return false
	}
	return true
}
