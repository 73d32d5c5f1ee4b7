package search

import (
	"slices"
	"strings"

	"vitrine/schema"
)

// Suggestion is one autocomplete suggestion: a product and what a dropdown shows of it.
type Suggestion struct {
	ID          schema.ProductID
	Slug, Title string
}

// Suggest returns up to limit products whose title has a word starting with prefix (the last
// word of prefix may be partial; earlier words must match whole), best first: titles whose first
// word matches the first word of prefix first, then featured products, then shorter titles
// (in characters), then lower ids. Matching is case- and diacritic-insensitive, like Search.
// When prefix ends with a separator its last word is whole too.
func (ix *Index) Suggest(prefix string, limit int) []Suggestion {
	if limit <= 0 {
		return nil
	}
	var tk tokenizer
	tk.add(prefix)
	if tk.n() == 0 {
		return nil
	}
	words := make([]string, tk.n())
	for i := range words {
		words[i] = string(tk.tok(i))
	}
	partial := ""
	whole := words
	if tk.trailing {
		partial, whole = words[len(words)-1], words[:len(words)-1]
	}
	if len(whole) == 0 {
		return ix.suggestPrefix(partial, limit)
	}
	return ix.suggestWords(whole, partial, limit)
}

// suggestPrefix answers a single partial word: straight from its prefix set when it is short,
// else by merging the sets of the words that start with it.
func (ix *Index) suggestPrefix(p string, limit int) []Suggestion {
	if runeLen(p) <= suggestPrefixMax {
		set, _ := ix.prefixes.Get(p)
		return ix.firstOf([]sentSet{set}, limit)
	}
	return ix.firstOf(ix.wordSets(p), limit)
}

// wordSets returns the suggestion sets of the title words that start with p.
func (ix *Index) wordSets(p string) []sentSet {
	var sets []sentSet
	it := ix.words.Iterator()
	it.Seek(p)
	for !it.Done() {
		w, set, _ := it.Next()
		if !strings.HasPrefix(w, p) {
			break
		}
		sets = append(sets, set)
	}
	return sets
}

// firstOf merges suggestion sets in rank order and returns the first limit distinct documents.
// It decodes only the entries it returns (and the next head of each set): O(limit + sets).
func (ix *Index) firstOf(sets []sentSet, limit int) []Suggestion {
	if len(sets) == 1 {
		if sets[0].n == 0 {
			return nil
		}
		var it sentIter
		it.reset(sets[0])
		out := make([]Suggestion, 0, min(limit, sets[0].n))
		for len(out) < limit {
			e, ok := it.next()
			if !ok {
				break
			}
			out = append(out, ix.suggestion(e.ord()))
		}
		return out
	}
	its := make([]sentIter, len(sets))
	curs := make([]sent, len(sets))
	k := 0
	for _, s := range sets {
		its[k].reset(s)
		if e, ok := its[k].next(); ok {
			curs[k] = e
			k++
		}
	}
	its, curs = its[:k], curs[:k]
	var out []Suggestion
	var seen []schema.ProductID
	for len(its) > 0 && len(out) < limit {
		// Few sets in practice: a linear scan for the smallest head.
		m := 0
		for i := 1; i < len(curs); i++ {
			if cmpSent(curs[i], curs[m]) < 0 {
				m = i
			}
		}
		e := curs[m]
		if next, ok := its[m].next(); ok {
			curs[m] = next
		} else {
			its = slices.Delete(its, m, m+1)
			curs = slices.Delete(curs, m, m+1)
		}
		if slices.Contains(seen, e.id) {
			continue // already suggested through a word ranking it higher
		}
		seen = append(seen, e.id)
		out = append(out, ix.suggestion(e.ord()))
	}
	return out
}

func (ix *Index) suggestion(ord uint32) Suggestion {
	r := ix.recs.get(int(ord))
	return Suggestion{ID: r.id, Slug: r.txt.slug, Title: r.txt.title}
}

// suggestWords answers whole words (at least one) and a partial last word (may be empty). The
// documents are those of the first word's set that have the other words; when another word is
// much rarer, its documents are checked instead and sorted.
func (ix *Index) suggestWords(whole []string, partial string, limit int) []Suggestion {
	first, ok := ix.words.Get(whole[0])
	if !ok {
		return nil
	}
	if len(whole) == 1 && partial == "" {
		return ix.firstOf([]sentSet{first}, limit)
	}
	// The rarest other condition, as the sets that hold its candidates.
	var rare []sentSet
	rareN := first.n
	for _, w := range whole[1:] {
		set, ok := ix.words.Get(w)
		if !ok {
			return nil
		}
		if set.n < rareN {
			rare, rareN = []sentSet{set}, set.n
		}
	}
	if partial != "" {
		var sets []sentSet
		if runeLen(partial) <= suggestPrefixMax {
			set, _ := ix.prefixes.Get(partial)
			sets = []sentSet{set}
		} else {
			sets = ix.wordSets(partial)
		}
		n := 0
		for _, s := range sets {
			n += s.n
		}
		if n == 0 {
			return nil
		}
		if n < rareN {
			rare, rareN = sets, n
		}
	}
	var tk tokenizer
	var out []Suggestion
	if rare == nil || rareN*4 >= first.n {
		// Walk the first word's set in rank order: its entries rank exactly as required.
		var it sentIter
		it.reset(first)
		for len(out) < limit {
			e, ok := it.next()
			if !ok {
				break
			}
			if ok, _ := ix.titleHas(&tk, e.ord(), whole, partial); ok {
				out = append(out, ix.suggestion(e.ord()))
			}
		}
		return out
	}
	// Check the rare candidates, rank them, keep the best.
	var found []sent
	var it sentIter
	for _, set := range rare {
		it.reset(set)
		for e, ok := it.next(); ok; e, ok = it.next() {
			if ok, isFirst := ix.titleHas(&tk, e.ord(), whole, partial); ok {
				found = append(found, makeSent(isFirst, ix.recs.get(int(e.ord())).srank, e.ord(), e.id))
			}
		}
	}
	slices.SortFunc(found, cmpSent)
	found = slices.CompactFunc(found, func(a, b sent) bool { return a.id == b.id })
	for _, e := range found[:min(limit, len(found))] {
		out = append(out, ix.suggestion(e.ord()))
	}
	return out
}

// titleHas reports whether the title of a document has each whole word and a word starting with
// partial (when not empty), and whether its first word is whole[0].
func (ix *Index) titleHas(tk *tokenizer, ord uint32, whole []string, partial string) (ok, first bool) {
	tk.reset()
	tk.add(ix.recs.get(int(ord)).txt.title)
	if tk.n() == 0 {
		return false, false
	}
	for _, w := range whole {
		if !tk.has(w, false) {
			return false, false
		}
	}
	if partial != "" && !tk.has(partial, true) {
		return false, false
	}
	return true, string(tk.tok(0)) == whole[0]
}

// has reports whether a token equals w (or starts with it, for prefix).
func (t *tokenizer) has(w string, prefix bool) bool {
	for i := 0; i < t.n(); i++ {
		tok := t.tok(i)
		if string(tok) == w || prefix && len(tok) > len(w) && string(tok[:len(w)]) == w {
			return true
		}
	}
	return false
}
