package search

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"vitrine/schema"
)

// Sort orders search results.
type Sort int

// Sort orders. Ties fall back to relevance, then newest, then id.
const (
	// Relevance ranks by score (see the package documentation); with no query text it is Newest.
	Relevance Sort = iota
	// PriceAsc puts the cheapest first.
	PriceAsc
	// PriceDesc puts the most expensive first.
	PriceDesc
	// Newest puts the most recently created first.
	Newest
	// TitleAsc orders by normalised title (lowercase, without diacritics).
	TitleAsc
)

// Query is a search: text, filters, order and page.
type Query struct {
	// Text is the user's query. Empty: every document that passes the filters.
	Text string
	// Categories keeps documents in any of them (the caller expands category subtrees).
	Categories []schema.CategoryID
	// MinPrice and MaxPrice bound the price, inclusive, in the default currency's minor units.
	MinPrice *int64
	MaxPrice *int64
	// Availability keeps documents of any of these classes; empty keeps all.
	Availability []schema.Availability
	// Sort is the order of the hits.
	Sort Sort
	// Offset and Limit select the page of hits; negative values are 0. Limit 0 returns no hits,
	// only the total.
	Offset, Limit int
}

// Hit is one result: a product and its relevance score (0 for a query without text).
type Hit struct {
	ID    schema.ProductID
	Score float64
}

// Result is a page of hits and the number of documents that matched in all.
type Result struct {
	Hits  []Hit
	Total int
}

// Limits of query evaluation.
const (
	maxQueryTerms      = 16 // words of a query beyond these are ignored
	maxPrefixExpansion = 32 // words matched by the last query word as a prefix (the most frequent)
	maxFuzzyExpansion  = 16 // words matched by one query word with a typo (the most frequent)
)

// Ranking constants. A matched query word scores a level (title +3, exact +2, prefix +1, typo
// +0) plus its BM25 score squashed into [0, 1); a document scores 100 per matched query word plus
// those, so more matched words always win, then title matches, then exact ones, then BM25.
const (
	bm25K1      = 1.2
	bm25B       = 0.75
	titleWeight = 4.0
	descWeight  = 1.0
	squashK     = 8.0
	matchWeight = 100.0
	levelTitle  = 3
	levelExact  = 2
	levelPrefix = 1
	levelFuzzy  = 0
)

// expansion is one indexed word a query word matches, with what scoring needs of it.
type expansion struct {
	word       string
	t          term
	level      int
	idfT, idfD float64
}

// plan is a parsed text query.
type plan struct {
	words []string       // distinct query words
	exps  [][]*expansion // indexed words each query word matches
}

// parse tokenises the query text: stop words are dropped when other words remain, duplicates
// removed, and the last word also matches as a prefix unless the text ends with a separator.
func parseQuery(text string) (words []string, prefixLast bool) {
	var tk tokenizer
	tk.add(text)
	if tk.n() == 0 {
		return nil, false
	}
	all := make([]string, tk.n())
	stop := 0
	for i := range all {
		all[i] = string(tk.tok(i))
		if isStopWord(all[i]) {
			stop++
		}
	}
	last := all[len(all)-1]
	prefixLast = tk.trailing
	for _, w := range all {
		if stop < len(all) && isStopWord(w) {
			if w == last {
				prefixLast = false
			}
			continue
		}
		if !slices.Contains(words, w) {
			if len(words) == maxQueryTerms {
				if w == last {
					prefixLast = false
				}
				continue
			}
			words = append(words, w)
		}
	}
	if prefixLast && words[len(words)-1] != last {
		// The last word repeats an earlier one: it is that word, prefix included; keep it last.
		i := slices.Index(words, last)
		words = append(slices.Delete(words, i, i+1), last)
	}
	return words, prefixLast
}

func (ix *Index) plan(text string) plan {
	words, prefixLast := parseQuery(text)
	p := plan{words: words, exps: make([][]*expansion, len(words))}
	for i, w := range words {
		var exps []*expansion
		if t, ok := ix.terms.Get(w); ok {
			exps = append(exps, ix.expansion(w, t, levelExact))
		} else if ix.fuzzable(w) {
			for _, c := range ix.fuzzyMatches(w) {
				t, _ := ix.terms.Get(c)
				exps = append(exps, ix.expansion(c, t, levelFuzzy))
			}
		}
		if prefixLast && i == len(words)-1 {
			for _, c := range ix.prefixMatches(w) {
				if j := slices.IndexFunc(exps, func(e *expansion) bool { return e.word == c }); j >= 0 {
					exps[j].level = max(exps[j].level, levelPrefix)
					continue
				}
				t, _ := ix.terms.Get(c)
				exps = append(exps, ix.expansion(c, t, levelPrefix))
			}
		}
		p.exps[i] = exps
	}
	return p
}

func (ix *Index) expansion(w string, t term, level int) *expansion {
	n := float64(ix.n)
	idf := func(df int32) float64 {
		return math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
	}
	return &expansion{word: w, t: t, level: level, idfT: idf(t.nT), idfD: idf(t.nD)}
}

// topByDF keeps the n most frequent words (ties by word).
func (ix *Index) topByDF(words []string, dfs []int, n int) []string {
	idx := make([]int, len(words))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Or(cmp.Compare(dfs[b], dfs[a]), strings.Compare(words[a], words[b])) })
	out := make([]string, 0, min(n, len(idx)))
	for _, i := range idx[:min(n, len(idx))] {
		out = append(out, words[i])
	}
	return out
}

// prefixMatches returns the indexed words that start with w (w excluded), the most frequent first.
func (ix *Index) prefixMatches(w string) []string {
	var words []string
	var dfs []int
	it := ix.vocab.Iterator()
	it.Seek(w)
	for !it.Done() {
		k, _, _ := it.Next()
		if !strings.HasPrefix(k, w) {
			break
		}
		if k != w {
			t, _ := ix.terms.Get(k)
			words = append(words, k)
			dfs = append(dfs, t.post.n)
		}
	}
	return ix.topByDF(words, dfs, maxPrefixExpansion)
}

// fuzzyMatches returns the indexed words at distance 1 from w, the most frequent first. It looks
// up w and its deletion variants among the words (w has an extra character) and in the map of
// the words' deletion variants (w lacks a character, or has one substituted or transposed), then
// checks the distance of each candidate.
func (ix *Index) fuzzyMatches(w string) []string {
	var cands []string
	consider := func(c string) {
		if !allDigits(c) && !slices.Contains(cands, c) && withinOne(w, c) {
			if _, ok := ix.terms.Get(c); ok {
				cands = append(cands, c)
			}
		}
	}
	for _, c := range ix.fuzzLookup([]byte(w)) {
		consider(c)
	}
	deletes(w, nil, func(v []byte) {
		if _, ok := ix.terms.Get(string(v)); ok {
			consider(string(v))
		}
		for _, c := range ix.fuzzLookup(v) {
			consider(c)
		}
	})
	dfs := make([]int, len(cands))
	for i, c := range cands {
		t, _ := ix.terms.Get(c)
		dfs[i] = t.post.n
	}
	return ix.topByDF(cands, dfs, maxFuzzyExpansion)
}

func (ix *Index) fuzzLookup(v []byte) []string {
	list, _ := ix.fuzz.Get(hashDelete(v))
	return list
}

// stream walks one expansion's posting list during a query.
type stream struct {
	it   piter[uint64, postCodec]
	cur  uint64
	word int // index of the query word
	exp  *expansion
}

// streamHeap is a min-heap of streams by current ordinal.
type streamHeap []*stream

func (h streamHeap) less(i, j int) bool { return h[i].cur>>16 < h[j].cur>>16 }

func (h streamHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

func (h *streamHeap) init() {
	for i := len(*h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// advance moves the top stream on, dropping it when it is done.
func (h *streamHeap) advance() {
	s := (*h)[0]
	if p, ok := s.it.next(); ok {
		s.cur = p
	} else {
		last := len(*h) - 1
		(*h)[0] = (*h)[last]
		*h = (*h)[:last]
	}
	h.down(0)
}

// Search runs a query. Text words are ORed: a document matching more of them ranks higher (see
// the package documentation for the ranking). Total counts every document that matches the text
// and passes the filters. The cost is linear in the postings of the indexed words the query
// matches (or, without text, in the documents of the filtered categories, or all of them), plus
// a log(Offset+Limit) heap operation per match that enters the page.
func (ix *Index) Search(q Query) Result {
	offset, limit := max(q.Offset, 0), max(q.Limit, 0)
	f := newFilter(q)
	p := ix.plan(q.Text)
	if len(p.words) == 0 {
		sort := q.Sort
		if sort == Relevance {
			sort = Newest
		}
		return ix.browse(&f, q.Categories, newCollector(sort, offset, limit))
	}
	col := newCollector(q.Sort, offset, limit)
	var h streamHeap
	for wi, exps := range p.exps {
		for _, e := range exps {
			s := &stream{word: wi, exp: e}
			s.it.reset(e.t.post)
			if cur, ok := s.it.next(); ok {
				s.cur = cur
				h = append(h, s)
			}
		}
	}
	h.init()
	avgT, avgD := ix.avgLens()
	best := make([]float64, len(p.words))
	for len(h) > 0 {
		ord := postOrd(h[0].cur)
		r := ix.recs.get(int(ord))
		if !f.match(r) {
			for len(h) > 0 && postOrd(h[0].cur) == ord {
				h.advance()
			}
			continue
		}
		for i := range best {
			best[i] = -1
		}
		for len(h) > 0 && postOrd(h[0].cur) == ord {
			s := h[0]
			if v := value(s.exp, s.cur, r, avgT, avgD); v > best[s.word] {
				best[s.word] = v
			}
			h.advance()
		}
		score := 0.0
		for _, v := range best {
			if v >= 0 {
				score += matchWeight + v
			}
		}
		col.add(cand{score: score, r: r})
	}
	return col.result()
}

func (ix *Index) avgLens() (float64, float64) {
	if ix.n == 0 {
		return 1, 1
	}
	return max(float64(ix.sumT)/float64(ix.n), 1), max(float64(ix.sumD)/float64(ix.n), 1)
}

// value is the score of one query word in one document through one expansion, in [0, 6).
func value(e *expansion, p uint64, r *rec, avgT, avgD float64) float64 {
	level := e.level
	bm := 0.0
	if tf := float64(postTfT(p)); tf > 0 {
		level += levelTitle
		bm += titleWeight * e.idfT * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*float64(r.tlen)/avgT))
	}
	if tf := float64(postTfD(p)); tf > 0 {
		bm += descWeight * e.idfD * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*float64(r.dlen)/avgD))
	}
	return float64(level) + bm/(bm+squashK)
}

// browse lists the documents that pass the filters, with no text.
func (ix *Index) browse(f *filter, cats []schema.CategoryID, col *collector) Result {
	if len(cats) == 0 {
		ix.recs.each(func(_ int, r *rec) bool {
			if r.doc != nil && f.match(r) {
				col.add(cand{r: r})
			}
			return true
		})
		return col.result()
	}
	// The union of the category sets, in ordinal order.
	var its []*piter[uint32, ordCodec]
	var curs []uint32
	for _, c := range cats {
		set, ok := ix.cats.Get(c)
		if !ok {
			continue
		}
		it := &piter[uint32, ordCodec]{}
		it.reset(set)
		if o, ok := it.next(); ok {
			its = append(its, it)
			curs = append(curs, o)
		}
	}
	for len(its) > 0 {
		ord := slices.Min(curs)
		for i := 0; i < len(its); {
			if curs[i] != ord {
				i++
				continue
			}
			if o, ok := its[i].next(); ok {
				curs[i] = o
				i++
			} else {
				its = slices.Delete(its, i, i+1)
				curs = slices.Delete(curs, i, i+1)
			}
		}
		if r := ix.recs.get(int(ord)); f.match(r) {
			col.add(cand{r: r})
		}
	}
	return col.result()
}

// filter is a compiled Query filter.
type filter struct {
	cats       []schema.CategoryID
	catSet     map[schema.CategoryID]bool // for many categories
	minP, maxP int64
	avail      uint8 // 0: any
	availOther []schema.Availability
}

func newFilter(q Query) filter {
	f := filter{cats: q.Categories, minP: math.MinInt64, maxP: math.MaxInt64}
	if len(f.cats) > 8 {
		f.catSet = make(map[schema.CategoryID]bool, len(f.cats))
		for _, c := range f.cats {
			f.catSet[c] = true
		}
	}
	if q.MinPrice != nil {
		f.minP = *q.MinPrice
	}
	if q.MaxPrice != nil {
		f.maxP = *q.MaxPrice
	}
	for _, a := range q.Availability {
		b := availBit(a)
		f.avail |= b
		if b == availOther {
			f.availOther = append(f.availOther, a)
		}
	}
	return f
}

func (f *filter) match(r *rec) bool {
	if r == nil || r.doc == nil || r.price < f.minP || r.price > f.maxP {
		return false
	}
	if f.avail != 0 {
		if f.avail&r.avail == 0 {
			return false
		}
		if r.avail == availOther && !slices.Contains(f.availOther, r.doc.Availability) {
			return false
		}
	}
	if len(f.cats) > 0 {
		for _, c := range r.doc.CategoryIDs {
			if f.catSet != nil && f.catSet[c] || f.catSet == nil && slices.Contains(f.cats, c) {
				return true
			}
		}
		return false
	}
	return true
}

// cand is a matching document.
type cand struct {
	score float64
	r     *rec
}

// collector keeps the best offset+limit candidates and counts them all.
type collector struct {
	cmp           func(a, b cand) int // < 0: a ranks before b
	offset, limit int
	k             int
	heap          []cand // the worst kept candidate on top
	total         int
}

func newCollector(s Sort, offset, limit int) *collector {
	c := &collector{cmp: comparer(s), offset: offset, limit: limit}
	if limit > 0 {
		c.k = offset + limit
		if c.k < 0 { // overflow
			c.k = math.MaxInt
		}
	}
	return c
}

func byRelevance(a, b cand) int {
	if a.score != b.score {
		if a.score > b.score {
			return -1
		}
		return 1
	}
	return byAge(a, b)
}

func byAge(a, b cand) int {
	switch {
	case a.r.sec != b.r.sec:
		return cmp.Compare(b.r.sec, a.r.sec)
	case a.r.nsec != b.r.nsec:
		return cmp.Compare(b.r.nsec, a.r.nsec)
	}
	return cmp.Compare(a.r.id, b.r.id)
}

func comparer(s Sort) func(a, b cand) int {
	switch s {
	case PriceAsc:
		return func(a, b cand) int {
			if a.r.price != b.r.price {
				return cmp.Compare(a.r.price, b.r.price)
			}
			return byRelevance(a, b)
		}
	case PriceDesc:
		return func(a, b cand) int {
			if a.r.price != b.r.price {
				return cmp.Compare(b.r.price, a.r.price)
			}
			return byRelevance(a, b)
		}
	case Newest:
		return func(a, b cand) int {
			switch {
			case a.r.sec != b.r.sec:
				return cmp.Compare(b.r.sec, a.r.sec)
			case a.r.nsec != b.r.nsec:
				return cmp.Compare(b.r.nsec, a.r.nsec)
			}
			return byRelevance(a, b)
		}
	case TitleAsc:
		return func(a, b cand) int {
			if a.r.titleKey != b.r.titleKey {
				return cmp.Compare(a.r.titleKey, b.r.titleKey)
			}
			if a.r.doc.Title != b.r.doc.Title {
				if c := strings.Compare(strings.Join(normalize(a.r.doc.Title), " "), strings.Join(normalize(b.r.doc.Title), " ")); c != 0 {
					return c
				}
			}
			return byRelevance(a, b)
		}
	}
	return byRelevance
}

func (c *collector) add(x cand) {
	c.total++
	if c.k == 0 {
		return
	}
	if len(c.heap) < c.k {
		c.heap = append(c.heap, x)
		// Sift up: the parent must rank after (be worse than) the child.
		for i := len(c.heap) - 1; i > 0; {
			p := (i - 1) / 2
			if c.cmp(c.heap[p], c.heap[i]) >= 0 {
				break
			}
			c.heap[p], c.heap[i] = c.heap[i], c.heap[p]
			i = p
		}
		return
	}
	if c.cmp(x, c.heap[0]) >= 0 {
		return
	}
	c.heap[0] = x
	h := c.heap
	for i := 0; ; {
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		m := l
		if r := l + 1; r < len(h) && c.cmp(h[r], h[l]) > 0 {
			m = r
		}
		if c.cmp(h[m], h[i]) <= 0 {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

func (c *collector) result() Result {
	res := Result{Total: c.total}
	if c.offset >= len(c.heap) {
		return res
	}
	slices.SortFunc(c.heap, c.cmp)
	page := c.heap[c.offset:]
	res.Hits = make([]Hit, len(page))
	for i, x := range page {
		res.Hits[i] = Hit{ID: x.r.id, Score: x.score}
	}
	return res
}
