package origin

import (
	"regexp"
	"strings"
)

// The template hierarchy of a template slug (WordPress's get_template_hierarchy), which the
// lookup route walks (templates.go). The post types and taxonomies a "single-…" or
// "taxonomy-…" slug may name are this store's, in WordPress's registration order: a slug names
// the first whose name prefixes the rest of it.

// hierarchyPostTypes are the post types a single-{type} slug may name.
var hierarchyPostTypes = []string{"post", "page", "attachment", "revision", "nav_menu_item", "cms_block",
	"cms_template", "cms_template_part", "cms_global_styles", "cms_navigation"}

// hierarchyTaxonomies are the taxonomies a taxonomy-{taxonomy} slug may name.
var hierarchyTaxonomies = []string{"category", "post_tag", "nav_menu", "post_format", "cms_pattern_category"}

var (
	archiveKinds  = regexp.MustCompile(`^(author|category|archive|tag|page)-.+$`)
	singularKinds = regexp.MustCompile(`^(taxonomy|single)-(.+)$`)
)

// templateHierarchy returns the slugs a template of slug falls back to, most specific first,
// always ending with index. isCustom (a custom template, chosen per page) falls back as a page;
// prefix, when given, names the template's kind ("taxonomy-genre" for "taxonomy-genre-rock").
func templateHierarchy(slug string, isCustom bool, prefix string) []string {
	switch {
	case slug == "index":
		return []string{"index"}
	case isCustom:
		return []string{"page", "singular", "index"}
	case slug == "front-page":
		return []string{"front-page", "home", "index"}
	}
	h := []string{slug}
	if prefix != "" {
		kind, _, _ := strings.Cut(prefix, "-")
		if prefix != slug && prefix != kind {
			h = append(h, prefix)
		}
		if slug != kind {
			h = append(h, kind)
		}
	} else if m := archiveKinds.FindStringSubmatch(slug); m != nil {
		h = append(h, m[1])
	} else if m := singularKinds.FindStringSubmatch(slug); m != nil {
		kind, rest := m[1], m[2]
		items := hierarchyTaxonomies
		if kind == "single" {
			items = hierarchyPostTypes
		}
		for _, item := range items {
			if !strings.HasPrefix(rest, item) {
				continue
			}
			if rest == item {
				h = append(h, kind)
				break
			}
			if len(rest) > len(item)+1 {
				h = append(h, kind+"-"+item, kind)
				break
			}
		}
	}
	if slug == "date" || hasAnyPrefix(slug, "author", "taxonomy", "category", "tag") {
		h = append(h, "archive")
	}
	if slug == "attachment" {
		h = append(h, "single")
	}
	if strings.HasPrefix(slug, "single") || strings.HasPrefix(slug, "page") || slug == "attachment" {
		h = append(h, "singular")
	}
	return append(h, "index")
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
