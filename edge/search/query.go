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
	ub         [4]float64 // upper: bounds of value for frequency codes 1, 2 and 3 (see bound)
	kT, kD     float64    // the smallest length normalisations of value's denominators
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
	it   postIter
	cur  uint64 // the next posting
	word int    // index of the query word
	exp  *expansion
	done bool // no postings left (cur is stale)
}

// next moves the stream to its next posting, or marks it done.
func (s *stream) next() {
	if it := &s.it; it.pos < it.n { // postIter.next, inline
		s.cur = it.buf[it.pos&(blockMax-1)]
		it.pos++
	} else if p, ok := it.refill(); ok {
		s.cur = p
	} else {
		s.done = true
	}
}

// Search runs a query. Text words are ORed: a document matching more of them ranks higher (see
// the package documentation for the ranking). Total counts every document that matches the text
// and passes the filters. The cost is linear in the postings of the indexed words the query
// matches (or, without text, in the documents of the filtered categories, or all of them), plus
// a log(Offset+Limit) heap operation per match that enters the page.
//
// Ranked by relevance, a match is first bounded from its postings alone (its frequencies at the
// shortest fields of the index, see expansion.upper): one whose bound cannot enter a full page
// is counted without being scored, and without reading its record when there are no filters.
// Bounds never exceed scores' exact values, so results are those of scoring every match.
func (ix *Index) Search(q Query) Result { return ix.search(q, true) }

// search is Search, with bounds false scoring every match (for tests: the results are equal).
func (ix *Index) search(q Query, bounds bool) Result {
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
	n := 0
	for _, exps := range p.exps {
		n += len(exps)
	}
	all := make([]stream, n)
	ss := make([]*stream, 0, n) // in query word order
	avgT, avgD := ix.avgLens()
	for wi, exps := range p.exps {
		for _, e := range exps {
			e.bound(ix.minT, ix.minD, avgT, avgD)
			s := &all[len(ss)]
			s.word, s.exp = wi, e
			s.it.reset(e.t.post)
			if s.next(); !s.done {
				ss = append(ss, s)
			}
		}
	}
	sc := scorer{
		ix: ix, f: &f, col: col, avgT: avgT, avgD: avgD,
		// Bounds prune only a relevance ranking (or a page of no hits, which only counts);
		// every document of a posting list is live, so without filters a pruned match needs
		// nothing but its postings.
		prune:   bounds && (q.Sort == Relevance || col.k == 0),
		trivial: f.trivial(),
	}
	switch len(ss) {
	case 0:
	case 1:
		sc.one(ss[0])
	default:
		sc.many(ss, len(p.words))
	}
	return col.result()
}

// scorer evaluates the matches of a query's streams into a collector.
type scorer struct {
	ix             *Index
	f              *filter
	col            *collector
	avgT, avgD     float64
	prune, trivial bool
}

// pruned reports whether a match of score bound b cannot enter the page, counting it if so.
func (sc *scorer) pruned(b float64, ord uint32, floor float64, full bool) bool {
	if !sc.prune || !full || b >= floor {
		return false
	}
	if sc.trivial || sc.f.match(sc.ix.recs.get(int(ord))) {
		sc.col.total++
	}
	return true
}

// one scores a single posting list (one query word matching one indexed word, the common
// case): a document's score is its one value, 0 + (matchWeight + value) exactly as many sums
// it, and the bounds of the one-varint frequency codes are at hand.
func (sc *scorer) one(s *stream) {
	e, it := s.exp, &s.it
	var bounds [4]float64 // the score bounds of frequency codes 1, 2 and 3
	for c := 1; c < len(bounds); c++ {
		bounds[c] = matchWeight + e.ub[c]
	}
	floor, full := sc.col.floor()
	for p, ok := s.cur, true; ok; {
		var b float64
		switch p & 0xffff {
		case 1 << 8:
			b = bounds[1]
		case 1:
			b = bounds[2]
		case 1<<8 | 1:
			b = bounds[3]
		default:
			b = matchWeight + e.upperOf(postTfT(p), postTfD(p))
		}
		if !sc.pruned(b, postOrd(p), floor, full) {
			if r := sc.ix.recs.get(int(postOrd(p))); sc.f.match(r) {
				sc.col.add(cand{score: matchWeight + value(e, p, r, sc.avgT, sc.avgD), r: r})
				floor, full = sc.col.floor()
			}
		}
		if it.pos < it.n { // postIter.next, inline
			p = it.buf[it.pos&(blockMax-1)]
			it.pos++
		} else {
			p, ok = it.refill()
		}
	}
}

// window is how many consecutive ordinals many evaluates at a time.
const window = 1024

// many scores several posting lists (ss, in query word order), a window of ordinals at a time:
// it gathers each list's postings in the window, sums each document's bound word by word (a
// word's bound is the largest of its expansions', as its value is the largest of theirs; the
// sums are made in the order of the scores' sums, so they bound them in floating point too),
// then goes through the window's documents in order, scoring only those whose bound can enter
// the page.
func (sc *scorer) many(ss []*stream, words int) {
	var bound, wbound [window]float64
	span := make([]struct{ lo, hi, at int }, len(ss)) // each stream's postings in buf
	best := make([]float64, words)
	// A window's postings: about each list's share of the window, plus a block of slack.
	est := 0
	for _, s := range ss {
		est += min(window, s.exp.t.post.n*window/max(int(sc.ix.nextOrd), 1)+blockMax)
	}
	buf := make([]uint64, 0, est)
	floor, full := sc.col.floor()
	live := len(ss)
	for live > 0 {
		lo := uint32(math.MaxUint32)
		for _, s := range ss {
			if !s.done {
				lo = min(lo, postOrd(s.cur))
			}
		}
		hi := uint64(lo) + window
		buf = buf[:0]
		for i, s := range ss {
			span[i].lo = len(buf)
			for !s.done && uint64(postOrd(s.cur)) < hi {
				// The current posting, then those of the decoded block that are in the window.
				buf = append(buf, s.cur)
				it := &s.it
				rest := it.buf[it.pos:it.n]
				k := 0
				for k < len(rest) && uint64(postOrd(rest[k])) < hi {
					k++
				}
				buf = append(buf, rest[:k]...)
				it.pos += k
				if s.next(); s.done {
					live--
				}
			}
			span[i].hi, span[i].at = len(buf), span[i].lo
		}
		clear(bound[:])
		for i := 0; i < len(ss); {
			j := i + 1
			for j < len(ss) && ss[j].word == ss[i].word {
				j++
			}
			if j == i+1 {
				e := ss[i].exp
				for _, p := range buf[span[i].lo:span[i].hi] {
					bound[postOrd(p)-lo] += matchWeight + e.upper(p)
				}
			} else {
				for k := range wbound {
					wbound[k] = -1
				}
				for k := i; k < j; k++ {
					e := ss[k].exp
					for _, p := range buf[span[k].lo:span[k].hi] {
						if v := e.upper(p); v > wbound[postOrd(p)-lo] {
							wbound[postOrd(p)-lo] = v
						}
					}
				}
				for k, v := range wbound {
					if v >= 0 {
						bound[k] += matchWeight + v
					}
				}
			}
			i = j
		}
		for k, b := range bound {
			if b == 0 {
				continue // no posting: a matched word adds at least matchWeight
			}
			ord := lo + uint32(k)
			if full && b < floor && sc.pruned(b, ord, floor, full) {
				continue
			}
			r := sc.ix.recs.get(int(ord))
			if !sc.f.match(r) {
				continue
			}
			for w := range best {
				best[w] = -1
			}
			for i, s := range ss {
				at, end := span[i].at, span[i].hi
				for at < end && postOrd(buf[at]) < ord {
					at++
				}
				span[i].at = at
				if at < end && postOrd(buf[at]) == ord {
					if v := value(s.exp, buf[at], r, sc.avgT, sc.avgD); v > best[s.word] {
						best[s.word] = v
					}
				}
			}
			score := 0.0
			for _, v := range best {
				if v >= 0 {
					score += matchWeight + v
				}
			}
			sc.col.add(cand{score: score, r: r})
			floor, full = sc.col.floor()
		}
	}
}

// bound computes the expansion's score bounds for the three one-varint frequency codes (see
// upper), given lower bounds of the documents' title and description lengths.
func (e *expansion) bound(minT, minD uint16, avgT, avgD float64) {
	e.kT = bm25K1 * (1 - bm25B + bm25B*float64(minT)/avgT)
	e.kD = bm25K1 * (1 - bm25B + bm25B*float64(minD)/avgD)
	e.ub[1] = e.upperOf(1, 0)
	e.ub[2] = e.upperOf(0, 1)
	e.ub[3] = e.upperOf(1, 1)
}

// upper returns a bound of value(e, p, r, …) over every record r (value never exceeds it).
func (e *expansion) upper(p uint64) float64 {
	switch p & 0xffff {
	case 1 << 8:
		return e.ub[1]
	case 1:
		return e.ub[2]
	case 1<<8 | 1:
		return e.ub[3]
	}
	return e.upperOf(postTfT(p), postTfD(p))
}

// upperOf is value's formula at the shortest fields: each operation of its length
// normalisation is monotonic in the length, so value's denominators are at least these. A
// margin far above the rounding errors covers the squashing, which is monotonic only in exact
// arithmetic.
func (e *expansion) upperOf(tfT, tfD int) float64 {
	level := e.level
	bm := 0.0
	if tf := float64(tfT); tf > 0 {
		level += levelTitle
		bm += titleWeight * e.idfT * tf * (bm25K1 + 1) / (tf + e.kT)
	}
	if tf := float64(tfD); tf > 0 {
		bm += descWeight * e.idfD * tf * (bm25K1 + 1) / (tf + e.kD)
	}
	return float64(level) + bm/(bm+squashK) + 1e-9
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
			if r.txt != nil && f.match(r) {
				col.add(cand{r: r})
			}
			return true
		})
		return col.result()
	}
	// The union of the category sets, in ordinal order.
	all := make([]ordIter, len(cats))
	its := make([]*ordIter, 0, len(cats))
	var curs []uint32
	for _, c := range cats {
		set, ok := ix.cats.Get(c)
		if !ok {
			continue
		}
		it := &all[len(its)]
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

// trivial reports whether the filter keeps every document.
func (f *filter) trivial() bool {
	return len(f.cats) == 0 && f.avail == 0 && f.minP == math.MinInt64 && f.maxP == math.MaxInt64
}

func (f *filter) match(r *rec) bool {
	if r == nil || r.txt == nil || r.price < f.minP || r.price > f.maxP {
		return false
	}
	if f.avail != 0 {
		if f.avail&r.avail == 0 {
			return false
		}
		if r.avail == availOther && !slices.Contains(f.availOther, *r.txt.other) {
			return false
		}
	}
	if len(f.cats) > 0 {
		for _, c := range r.txt.cats {
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
			if a.r.txt.title != b.r.txt.title {
				if c := strings.Compare(strings.Join(normalize(a.r.txt.title), " "), strings.Join(normalize(b.r.txt.title), " ")); c != 0 {
					return c
				}
			}
			return byRelevance(a, b)
		}
	}
	return byRelevance
}

// floor returns the score a candidate must beat to enter the page when it is full (the score
// of the worst kept candidate) and whether it is full. A page of no hits is always full: every
// candidate is only counted.
func (c *collector) floor() (float64, bool) {
	if c.k == 0 {
		return math.Inf(1), true
	}
	if len(c.heap) < c.k {
		return 0, false
	}
	return c.heap[0].score, true
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
