package replica

import (
	"slices"

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
	return newPostMatcher(&q).sortedPage(slices.Values(posts))
}
