package replica

import (
	"slices"
	"strings"

	"vitrine/schema"
)

// MatchPosts runs q over records held outside any snapshot, with the matching and ordering of
// Snapshot.Posts (q.Scope is ignored): the origin queries a record's revisions with it, which
// are read from its database since they are never replicated. It returns Limit matches after
// Offset, and the total match count.
func MatchPosts(posts []*schema.Post, q PostQuery) ([]*schema.Post, int) {
	q.Offset, q.Limit = max(q.Offset, 0), max(q.Limit, 0)
	if q.Type == "" {
		q.Type = "post"
	}
	if len(q.Statuses) == 0 {
		q.Statuses = []schema.PostStatus{schema.StatusPublish}
	}
	m := newPostMatcher(&q)
	var all []ranked
	for _, p := range posts {
		if !m.match(p) {
			continue
		}
		r := ranked{p: p}
		switch q.OrderBy {
		case "relevance":
			r.rank = m.relevance(p)
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
