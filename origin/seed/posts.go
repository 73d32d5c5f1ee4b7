package seed

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"vitrine/schema"
)

// postPlan is one generated post. Its dates are offsets before the "now" of the transaction that
// writes it, so that the plan itself does not depend on the clock.
type postPlan struct {
	title, content, excerpt string
	status                  schema.PostStatus
	// age and modifiedAge are how long before "now" the post is dated and was last modified
	// (modifiedAge <= age, whole seconds).
	age, modifiedAge time.Duration
	// floating marks a draft whose date follows its modification date.
	floating bool
}

const (
	day = 24 * time.Hour
	// maxPostAge bounds how far back published posts are dated.
	maxPostAge = 365 * day
	// maxEditDelay bounds how long after its date a published post was last edited.
	maxEditDelay = 45 * day
	// maxDraftAge bounds how long ago drafts were last touched.
	maxDraftAge = 30 * day
)

// draftsFor returns how many drafts accompany n published posts: about 10%, at least one when
// there are posts.
func draftsFor(n int) int { return (n + 9) / 10 }

// planPosts generates published posts dated over the past year, oldest first, followed by
// drafts touched in the past month.
func planPosts(rng *rand.Rand, published, drafts int) []postPlan {
	titles := map[string]bool{}
	posts := make([]postPlan, 0, published+drafts)
	for i := range published + drafts {
		topic := pick(rng, postTopics[:])
		title := strings.ReplaceAll(pick(rng, postTitles[:]), "{topic}", topic)
		for try := 0; try < 8 && titles[title]; try++ {
			topic = pick(rng, postTopics[:])
			title = strings.ReplaceAll(pick(rng, postTitles[:]), "{topic}", topic)
		}
		titles[title] = true
		p := postPlan{title: title, content: postContent(rng, strings.ToLower(topic)), status: schema.StatusPublish}
		if rng.IntN(2) == 0 {
			p.excerpt = strings.ReplaceAll(pick(rng, postExcerpts[:]), "{topic}", strings.ToLower(topic))
		}
		if i < published {
			p.age = time.Hour + seconds(rng, maxPostAge-time.Hour)
			p.modifiedAge = p.age
			if rng.IntN(100) < 40 {
				p.modifiedAge -= seconds(rng, min(p.age, maxEditDelay))
			}
		} else {
			p.status = schema.StatusDraft
			p.floating = true
			p.age = seconds(rng, maxDraftAge)
			p.modifiedAge = p.age
		}
		posts = append(posts, p)
	}
	// Oldest first, so that post ids grow with dates; drafts stay last.
	slices.SortStableFunc(posts[:published], func(a, b postPlan) int { return cmp.Compare(b.age, a.age) })
	return posts
}

// seconds draws a duration of whole seconds in [0, d).
func seconds(rng *rand.Rand, d time.Duration) time.Duration {
	return time.Duration(rng.Int64N(int64(d/time.Second))) * time.Second
}

// postContent writes 3–6 paragraphs of 3–5 sentences, separated by blank lines.
func postContent(rng *rand.Rand, topic string) string {
	order := rng.Perm(len(postSentences))
	next := 0
	paragraphs := make([]string, 3+rng.IntN(4))
	for i := range paragraphs {
		var sentences []string
		if i == 0 {
			sentences = append(sentences, pick(rng, postOpeners[:]))
		}
		n := 3 + rng.IntN(3)
		if i == len(paragraphs)-1 {
			n-- // room for the closer
		}
		for len(sentences) < n {
			sentences = append(sentences, postSentences[order[next%len(order)]])
			next++
		}
		if i == len(paragraphs)-1 {
			sentences = append(sentences, pick(rng, postClosers[:]))
		}
		paragraphs[i] = strings.ReplaceAll(strings.Join(sentences, " "), "{topic}", topic)
	}
	return strings.Join(paragraphs, "\n\n")
}

// post builds the post of a plan, dated relative to now.
func (p *postPlan) post(now time.Time, author schema.UserID) *schema.Post {
	now = now.Truncate(time.Second)
	return &schema.Post{
		Type:          "post",
		Status:        p.status,
		Title:         p.title,
		Content:       p.content,
		Excerpt:       p.excerpt,
		Author:        author,
		CommentStatus: "open",
		PingStatus:    "open",
		Format:        "standard",
		DateGMT:       now.Add(-p.age),
		DateFloating:  p.floating,
		ModifiedGMT:   now.Add(-p.modifiedAge),
	}
}
