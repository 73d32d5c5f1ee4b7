package replica

import (
	"cmp"
	"iter"
	"slices"
	"strings"
	"time"

	"vitrine/schema"
)

// PostQuery selects records of one post type: WordPress's posts-controller collection query.
// Zero values select the published posts, newest first; Limit bounds how many are returned (0
// returns none, only the total).
type PostQuery struct {
	Scope Scope
	// Type is the stored post type ("" is "post").
	Type     string
	Statuses []schema.PostStatus // empty: publish only
	Include  []schema.PostID
	Exclude  []schema.PostID
	Slugs    []string
	// Authors and AuthorsExclude filter by author id.
	Authors, AuthorsExclude []schema.UserID
	// Parents and ParentsExclude filter by parent id (hierarchical types); 0 is "no parent".
	Parents, ParentsExclude []schema.PostID
	// MenuOrder, when set, keeps records with that menu_order.
	MenuOrder *int
	// After and Before bound the publication date, ModifiedAfter and ModifiedBefore the
	// modification date, all exclusive (WordPress's date_query); zero values do not filter.
	After, Before, ModifiedAfter, ModifiedBefore time.Time
	// Search keeps records matching every word of it (a word with a leading '-' excludes; quoted
	// phrases are one word) in SearchColumns (post_title, post_excerpt, post_content; empty: all
	// three), ignoring case. SearchExact instead keeps records where a column equals Search.
	Search        string
	SearchColumns []string
	SearchExact   bool
	// Sticky, when set, keeps sticky posts (true) or the others (false). StickyFirst moves
	// sticky posts to the head of the order (ignore_sticky=false).
	Sticky      *bool
	StickyFirst bool
	// Formats keeps posts of these formats ("standard" includes posts without one).
	Formats []string
	// MimeTypes and MediaTypes keep attachments of these MIME types or of these top-level types
	// ("image", "video", …); a record matches either (media.go). Both empty: no filter.
	MimeTypes, MediaTypes []string
	// Terms are taxonomy clauses, combined with AND, or with OR when TaxOr.
	Terms []TermClause
	TaxOr bool
	// ChildTerms returns the descendants of a term, for clauses with IncludeChildren
	// (Snapshot.ChildTerms gives the replica's hierarchy). Nil expands nothing.
	ChildTerms func(taxonomy string, id schema.TermID) []schema.TermID
	// OrderBy is date (default), author, id, include, include_slugs, menu_order, modified,
	// parent, relevance (needs Search), slug or title; Asc reverses the default descending order
	// (relevance, include and include_slugs ignore it: best first then newest, or the given
	// order).
	OrderBy string
	Asc     bool
	Offset  int
	Limit   int
}

// TermClause is one taxonomy filter: records with any (or, with All, every) of Terms in the
// taxonomy, or with none of them when Exclude. IncludeChildren adds each term's descendants to
// Terms, as WordPress's tax query does: with any and none, a descendant counts as its ancestor;
// with All, the record needs every term and every descendant, and terms given with one of their
// descendants match nothing (WP_Tax_Query counts the repeated term as an inexistent one).
type TermClause struct {
	Taxonomy        string
	Terms           []schema.TermID
	All             bool
	Exclude         bool
	IncludeChildren bool
	// none marks a clause WordPress refuses after expansion: it matches no record.
	none bool
}

// PostTerms returns a record's terms in a taxonomy (by rest base: categories, tags, menus,
// cms_pattern_category).
func PostTerms(p *schema.Post, taxonomy string) []schema.TermID {
	switch taxonomy {
	case "categories":
		return p.Categories
	case "tags":
		return p.Tags
	case "cms_pattern_category":
		return p.PatternCategories
	case "menus":
		if p.MenuItem != nil && p.MenuItem.Menus != 0 {
			return []schema.TermID{p.MenuItem.Menus}
		}
	}
	return nil
}

// Posts returns the records matching q (Limit of them after Offset) and the total match count.
func (s *Snapshot) Posts(q PostQuery) ([]*schema.Post, int) {
	q.Offset, q.Limit = max(q.Offset, 0), max(q.Limit, 0)
	if q.Type == "" {
		q.Type = "post"
	}
	if len(q.Statuses) == 0 {
		q.Statuses = []schema.PostStatus{schema.StatusPublish}
	}
	m := newPostMatcher(&q)
	// Public queries newest first walk the ordered index of public records: one pass, no sort.
	if q.Scope == Public && (q.OrderBy == "" || q.OrderBy == "date") && !q.Asc && !q.StickyFirst {
		var out []*schema.Post
		total := 0
		for it := s.postOrder.Iterator(); !it.Done(); {
			_, id, _ := it.Next()
			p := s.Post(id, Public)
			if p == nil || !m.match(p) {
				continue
			}
			if total >= q.Offset && len(out) < q.Limit {
				out = append(out, p)
			}
			total++
		}
		return out, total
	}
	return m.sortedPage(func(yield func(*schema.Post) bool) {
		for it := s.posts.Iterator(); !it.Done(); {
			_, sl, _ := it.Next()
			if p := pick(sl, q.Scope); p != nil && !yield(p) {
				return
			}
		}
	})
}

// sortedPage keeps the posts m matches, orders them as its query asks and returns the query's
// page of them and how many matched.
func (m *postMatcher) sortedPage(posts iter.Seq[*schema.Post]) ([]*schema.Post, int) {
	q := m.q
	var all []ranked
	for p := range posts {
		if !m.match(p) {
			continue
		}
		r := ranked{p: p}
		switch q.OrderBy {
		case "relevance":
			r.rank = m.relevance(p) // once per match, not per comparison
		case "title":
			r.key = strings.ToLower(p.Title)
		}
		all = append(all, r)
	}
	slices.SortFunc(all, m.compare)
	total := len(all)
	if q.Offset >= total {
		return nil, total
	}
	out := make([]*schema.Post, 0, min(total, q.Offset+q.Limit)-q.Offset)
	for _, r := range all[q.Offset:min(total, q.Offset+q.Limit)] {
		out = append(out, r.p)
	}
	return out, total
}

// ranked is a match with what its ordering needs computed once.
type ranked struct {
	p    *schema.Post
	rank int
	key  string
}

// postMatcher is a PostQuery prepared for matching many records.
type postMatcher struct {
	q       *PostQuery
	words   []string // lower-cased search words
	negs    []string // lower-cased excluded words
	phrase  string   // the lower-cased whole search
	columns [3]bool  // title, excerpt, content
	terms   []TermClause
}

func newPostMatcher(q *PostQuery) *postMatcher {
	m := &postMatcher{q: q, phrase: strings.ToLower(strings.TrimSpace(q.Search))}
	for _, w := range searchWords(q.Search) {
		if neg, ok := strings.CutPrefix(w, "-"); ok && len(neg) > 0 {
			m.negs = append(m.negs, strings.ToLower(neg))
			continue
		}
		m.words = append(m.words, strings.ToLower(w))
	}
	if len(q.SearchColumns) == 0 {
		m.columns = [3]bool{true, true, true}
	}
	for _, c := range q.SearchColumns {
		switch c {
		case "post_title":
			m.columns[0] = true
		case "post_excerpt":
			m.columns[1] = true
		case "post_content":
			m.columns[2] = true
		}
	}
	for _, c := range q.Terms {
		if len(c.Terms) == 0 {
			continue // WordPress drops a clause without terms
		}
		if c.IncludeChildren && q.ChildTerms != nil {
			given := slices.Clone(c.Terms)
			slices.Sort(given)
			given = slices.Compact(given)
			ids := make([]schema.TermID, 0, len(given))
			seen := make(map[schema.TermID]bool, len(given))
			for _, t := range given {
				for _, id := range append(q.ChildTerms(c.Taxonomy, t), t) {
					c.none = c.none || c.All && seen[id]
					seen[id] = true
					ids = append(ids, id)
				}
			}
			c.Terms = ids
		}
		m.terms = append(m.terms, c)
	}
	return m
}

// searchWords splits a search the way WordPress does: on spaces, with "quoted phrases" whole.
func searchWords(s string) []string {
	var out []string
	for len(s) > 0 {
		s = strings.TrimLeft(s, " \t\n\r,+")
		if s == "" {
			break
		}
		if s[0] == '"' {
			if end := strings.IndexByte(s[1:], '"'); end >= 0 {
				if w := strings.TrimSpace(s[1 : 1+end]); w != "" {
					out = append(out, w)
				}
				s = s[2+end:]
				continue
			}
			s = s[1:]
			continue
		}
		end := strings.IndexAny(s, " \t\n\r,+")
		if end < 0 {
			end = len(s)
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

func (m *postMatcher) match(p *schema.Post) bool {
	q := m.q
	typ := p.Type
	if typ == "" {
		typ = "post"
	}
	if typ != q.Type || !slices.Contains(q.Statuses, p.Status) {
		return false
	}
	if len(q.Include) > 0 && !slices.Contains(q.Include, p.ID) || slices.Contains(q.Exclude, p.ID) {
		return false
	}
	if len(q.Slugs) > 0 && !slices.Contains(q.Slugs, p.Slug) {
		return false
	}
	if len(q.Authors) > 0 && !slices.Contains(q.Authors, p.Author) || slices.Contains(q.AuthorsExclude, p.Author) {
		return false
	}
	if len(q.Parents) > 0 && !slices.Contains(q.Parents, p.Parent) || slices.Contains(q.ParentsExclude, p.Parent) {
		return false
	}
	if q.MenuOrder != nil && p.MenuOrder != *q.MenuOrder {
		return false
	}
	if !q.After.IsZero() && !p.DateGMT.After(q.After) || !q.Before.IsZero() && !p.DateGMT.Before(q.Before) {
		return false
	}
	if !q.ModifiedAfter.IsZero() && !p.ModifiedGMT.After(q.ModifiedAfter) || !q.ModifiedBefore.IsZero() && !p.ModifiedGMT.Before(q.ModifiedBefore) {
		return false
	}
	if q.Sticky != nil && p.Sticky != *q.Sticky {
		return false
	}
	if len(q.Formats) > 0 {
		f := p.Format
		if f == "" {
			f = "standard"
		}
		if !slices.Contains(q.Formats, f) {
			return false
		}
	}
	if len(m.terms) > 0 && !m.matchTerms(p) {
		return false
	}
	if !matchMime(p, q) {
		return false
	}
	if m.phrase != "" && !m.matchSearch(p) {
		return false
	}
	return true
}

func (m *postMatcher) matchTerms(p *schema.Post) bool {
	for _, c := range m.terms {
		have := PostTerms(p, c.Taxonomy)
		var ok bool
		switch {
		case c.none:
		case c.Exclude:
			ok = !slices.ContainsFunc(c.Terms, func(t schema.TermID) bool { return slices.Contains(have, t) })
		case c.All:
			ok = !slices.ContainsFunc(c.Terms, func(t schema.TermID) bool { return !slices.Contains(have, t) })
		default:
			ok = slices.ContainsFunc(c.Terms, func(t schema.TermID) bool { return slices.Contains(have, t) })
		}
		if m.q.TaxOr && ok {
			return true
		}
		if !m.q.TaxOr && !ok {
			return false
		}
	}
	return !m.q.TaxOr
}

func (m *postMatcher) matchSearch(p *schema.Post) bool {
	cols := [3]string{p.Title, p.Excerpt, p.Content}
	if m.q.SearchExact {
		for i, c := range cols {
			if m.columns[i] && strings.EqualFold(strings.TrimSpace(c), m.phrase) {
				return true
			}
		}
		return false
	}
	in := func(w string) bool {
		for i := range cols {
			if m.columns[i] && containsFold(cols[i], w) {
				return true
			}
		}
		return matchFileName(p, w) // attachments: the file name too (media.go)
	}
	for _, w := range m.words {
		if !in(w) {
			return false
		}
	}
	for _, w := range m.negs {
		if in(w) {
			return false
		}
	}
	return true
}

// relevance ranks a search match as WordPress's search order does (lower is better): the whole
// search in the title, every word in the title, any word in the title, the whole search in the
// excerpt, in the content, anything else.
func (m *postMatcher) relevance(p *schema.Post) int {
	title := p.Title
	switch {
	case containsFold(title, m.phrase):
		return 1
	case len(m.words) > 1 && !slices.ContainsFunc(m.words, func(w string) bool { return !containsFold(title, w) }):
		return 2
	case len(m.words) > 1 && slices.ContainsFunc(m.words, func(w string) bool { return containsFold(title, w) }):
		return 3
	case containsFold(p.Excerpt, m.phrase):
		return 4
	case containsFold(p.Content, m.phrase):
		return 5
	}
	return 6
}

// containsFold reports whether s contains the lower-case sub, ignoring case, without lowering
// s (texts are long, searches short): ASCII is folded byte by byte; a sub with other letters
// falls back to lowering s.
func containsFold(s, sub string) bool {
	if sub == "" {
		return true
	}
	for i := 0; i < len(sub); i++ {
		if sub[i] >= 0x80 {
			return strings.Contains(strings.ToLower(s), sub)
		}
	}
	first := sub[0]
	for i := 0; i+len(sub) <= len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != first {
			continue
		}
		j := 1
		for ; j < len(sub); j++ {
			d := s[i+j]
			if 'A' <= d && d <= 'Z' {
				d += 'a' - 'A'
			}
			if d != sub[j] {
				break
			}
		}
		if j == len(sub) {
			return true
		}
	}
	return false
}

func (m *postMatcher) compare(ra, rb ranked) int {
	q := m.q
	a, b := ra.p, rb.p
	if q.StickyFirst && a.Sticky != b.Sticky {
		if a.Sticky {
			return -1
		}
		return 1
	}
	if q.OrderBy == "relevance" {
		if c := cmp.Compare(ra.rank, rb.rank); c != 0 {
			return c
		}
		return cmp.Or(b.DateGMT.Compare(a.DateGMT), cmp.Compare(b.ID, a.ID))
	}
	switch q.OrderBy {
	case "include": // the given order, whatever the order argument (WordPress's post__in)
		return cmp.Compare(slices.Index(q.Include, a.ID), slices.Index(q.Include, b.ID))
	case "include_slugs":
		return cmp.Or(cmp.Compare(slices.Index(q.Slugs, a.Slug), slices.Index(q.Slugs, b.Slug)), cmp.Compare(a.ID, b.ID))
	}
	var c int
	switch q.OrderBy {
	case "author":
		c = cmp.Compare(a.Author, b.Author)
	case "id":
		c = cmp.Compare(a.ID, b.ID)
	case "menu_order":
		c = cmp.Compare(a.MenuOrder, b.MenuOrder)
	case "modified":
		c = a.ModifiedGMT.Compare(b.ModifiedGMT)
	case "parent":
		c = cmp.Compare(a.Parent, b.Parent)
	case "slug":
		c = strings.Compare(a.Slug, b.Slug)
	case "title":
		c = strings.Compare(ra.key, rb.key)
	default:
		c = a.DateGMT.Compare(b.DateGMT)
	}
	if c == 0 {
		c = cmp.Compare(a.ID, b.ID)
	}
	if !q.Asc {
		c = -c
	}
	return c
}
