package seed

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"vitrine/origin/store"
	"vitrine/schema"
)

// maxVariants bounds the variants of a demo product (store.MaxVariantsPerProduct bounds what
// the store accepts; this is what a realistic demo product has).
const maxVariants = 6

// maxChangesPerProduct is what creating one demo product records: the product and its variants,
// one change each.
const maxChangesPerProduct = 1 + maxVariants

// maxBatchProducts is the most products one transaction may create and stay within
// schema.MaxChangesPerTxn whatever their variants.
const maxBatchProducts = schema.MaxChangesPerTxn / maxChangesPerProduct

// node is one category of the demo tree, flattened so that parents come before children.
type node struct {
	name, slug, description string
	parent                  int // index of the parent node, -1 for a root
	root                    int // index of the root node (its own for a root)
	position                int // 1-based among siblings
	dept                    *department
	vocab                   vocabulary // used on leaves; inner nodes pass it down
	leaf                    bool
	id                      schema.CategoryID // set once the category is created
}

// vocabulary is what a category's products are made of, with what the category inherits from
// its ancestors applied.
type vocabulary struct {
	nouns, adjectives, materials []string
	pattern                      titlePattern
	options                      []optionDim
	minPrice, maxPrice           int64
	intros, sentences            []string
}

// categoryTree flattens the demo departments level by level (roots first, so parents exist
// before their children and root ids are the smallest), with unique slugs.
func categoryTree() []node {
	type item struct {
		cat    *category
		dept   *department
		parent int
		pos    int
	}
	var queue []item
	for i := range departments {
		queue = append(queue, item{cat: &departments[i].category, dept: &departments[i], parent: -1, pos: i + 1})
	}
	var nodes []node
	slugs := map[string]bool{}
	defaults := vocabulary{pattern: adjMaterialNoun}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		slug := schema.Slugify(it.cat.name)
		if slugs[slug] && it.parent >= 0 {
			slug = nodes[it.parent].slug + "-" + slug
		}
		for n := 2; slugs[slug]; n++ {
			slug = schema.Slugify(it.cat.name) + "-" + strconv.Itoa(n)
		}
		slugs[slug] = true
		idx := len(nodes)
		root, inherited := idx, defaults
		if it.parent >= 0 {
			root, inherited = nodes[it.parent].root, nodes[it.parent].vocab
		}
		nodes = append(nodes, node{
			name: it.cat.name, slug: slug, description: it.cat.description,
			parent: it.parent, root: root, position: it.pos, dept: it.dept,
			vocab: inherit(it.cat, &inherited), leaf: len(it.cat.children) == 0,
		})
		for j := range it.cat.children {
			queue = append(queue, item{cat: &it.cat.children[j], dept: it.dept, parent: idx, pos: j + 1})
		}
	}
	return nodes
}

// inherit returns a category's vocabulary, taking what it leaves unset from its parent's.
func inherit(c *category, parent *vocabulary) vocabulary {
	v := vocabulary{nouns: c.nouns, adjectives: c.adjectives, materials: c.materials, pattern: c.pattern,
		options: c.options, minPrice: c.minPrice, maxPrice: c.maxPrice, intros: c.intros, sentences: c.sentences}
	if v.nouns == nil {
		v.nouns = parent.nouns
	}
	if v.adjectives == nil {
		v.adjectives = parent.adjectives
	}
	if v.materials == nil {
		v.materials = parent.materials
	}
	if v.pattern == inheritPattern {
		v.pattern = parent.pattern
	}
	if v.options == nil {
		v.options = parent.options
	}
	if v.minPrice == 0 {
		v.minPrice, v.maxPrice = parent.minPrice, parent.maxPrice
	}
	if v.intros == nil {
		v.intros = parent.intros
	}
	if v.sentences == nil {
		v.sentences = parent.sentences
	}
	return v
}

// productPlan is one generated product with its variants, ready to be written. Writing it
// fills the ids, timestamps and versions; everything else is fixed at generation.
type productPlan struct {
	product  schema.Product
	variants []store.StockedVariant
}

// changes is the number of changes writing the plan records.
func (p *productPlan) changes() int { return 1 + len(p.variants) }

// catalog generates demo products. It is deterministic: the same random source and tree give
// the same products in the same order.
type catalog struct {
	rng      *rand.Rand
	nodes    []node
	leaves   []int
	reserved []string
	slugs    map[string]bool
	titles   map[string]bool
}

// newCatalog returns a generator over the category tree nodes, whose ids must be set.
func newCatalog(rng *rand.Rand, nodes []node) *catalog {
	c := &catalog{rng: rng, nodes: nodes, reserved: schema.ReservedProductSlugs(),
		slugs: map[string]bool{}, titles: map[string]bool{}}
	for i := range nodes {
		if nodes[i].leaf {
			c.leaves = append(c.leaves, i)
		}
	}
	return c
}

// product generates the seq-th product (1-based; seq numbers the SKUs).
func (c *catalog) product(seq int) productPlan {
	leaf := &c.nodes[c.leaves[c.rng.IntN(len(c.leaves))]]
	v := &leaf.vocab
	dept := leaf.dept

	title := c.title(v)
	for try := 0; try < 4 && c.titles[title]; try++ {
		title = c.title(v)
	}
	c.titles[title] = true
	slug := c.slug(title)

	p := schema.Product{
		Slug:        slug,
		Title:       title,
		Description: c.description(v, title),
		Status:      schema.ProductActive,
		Prices:      schema.Prices{"USD": c.price(v.minPrice, v.maxPrice)},
		CategoryIDs: c.categories(leaf),
	}
	withEUR := c.rng.IntN(100) < 30
	if withEUR {
		p.Prices["EUR"] = eur(p.Prices["USD"])
	}
	switch r := c.rng.IntN(100); {
	case r < 5:
		p.Status = schema.ProductDraft
	case r < 7:
		p.Status = schema.ProductArchived
	}
	p.Featured = p.Status == schema.ProductActive && c.rng.IntN(100) < 8
	for i := range 1 + c.rng.IntN(4) {
		p.Images = append(p.Images, schema.Image{
			URL:    fmt.Sprintf("https://images.vitrine.dev/demo/%s/%s-%d.jpg", c.nodes[leaf.root].slug, slug, i+1),
			Alt:    title + ", " + imageViews[i],
			Width:  dept.imageW,
			Height: dept.imageH,
		})
	}
	return productPlan{product: p, variants: c.variants(seq, dept.code, v.options, p.Prices["USD"], withEUR)}
}

func pick(rng *rand.Rand, words []string) string { return words[rng.IntN(len(words))] }

// title composes a product title from a leaf's vocabulary.
func (c *catalog) title(v *vocabulary) string {
	adj, noun := pick(c.rng, v.adjectives), pick(c.rng, v.nouns)
	switch v.pattern {
	case brandNounSuffix:
		brand := pick(c.rng, v.materials)
		if c.rng.IntN(100) < 60 {
			return brand + " " + noun + " " + adj
		}
		return brand + " " + noun
	case theAdjNoun:
		return "The " + adj + " " + noun
	default:
		if len(v.materials) > 0 && c.rng.IntN(100) < 85 {
			return adj + " " + pick(c.rng, v.materials) + " " + noun
		}
		return adj + " " + noun
	}
}

// slug returns the title's slug, with a numeric suffix when another product (or a route) has it.
func (c *catalog) slug(title string) string {
	base := schema.Slugify(title)
	s := base
	for n := 2; c.slugs[s] || slices.Contains(c.reserved, s); n++ {
		s = base + "-" + strconv.Itoa(n)
	}
	c.slugs[s] = true
	return s
}

// description is an intro naming the product and 1–4 of the leaf's sentences.
func (c *catalog) description(v *vocabulary, title string) string {
	parts := []string{strings.ReplaceAll(pick(c.rng, v.intros), "{title}", title)}
	n := 1 + c.rng.IntN(4)
	for _, i := range c.rng.Perm(len(v.sentences))[:min(n, len(v.sentences))] {
		parts = append(parts, v.sentences[i])
	}
	return strings.Join(parts, " ")
}

// price draws a USD shop price in [lo, hi] minor units, skewed towards the low end.
func (c *catalog) price(lo, hi int64) int64 {
	span := (hi-lo)/100 + 1
	amount := lo + min(c.rng.Int64N(span), c.rng.Int64N(span))*100
	if amount >= 5000 && c.rng.IntN(100) < 15 {
		return (amount + 50) / 100 * 100 // a round price: 120.00
	}
	return charm(amount)
}

// charm rounds an amount of minor units to the nearest whole unit minus one cent (24.99).
func charm(amount int64) int64 {
	return max((amount+50)/100, 1)*100 - 1
}

// eur is the EUR price a merchant would set for a USD price.
func eur(usd int64) int64 { return charm(usd * eurPercent / 100) }

// categories files a product under its leaf, sometimes also under the leaf's parent and the
// parent's parent.
func (c *catalog) categories(leaf *node) []schema.CategoryID {
	ids := []schema.CategoryID{leaf.id}
	for n := leaf; n.parent >= 0 && c.rng.IntN(100) < 50; {
		n = &c.nodes[n.parent]
		ids = append(ids, n.id)
	}
	return ids
}

// variants generates a product's 1–maxVariants variants over the leaf's option dimensions. The
// cheapest variant has the product's price; dearer ones carry a price override.
func (c *catalog) variants(seq int, code string, dims []optionDim, base int64, withEUR bool) []store.StockedVariant {
	// Choose the values of each dimension, keeping their product within maxVariants.
	picked := make([][]int, len(dims))
	budget := maxVariants
	for i, d := range dims {
		k := 1 + c.rng.IntN(min(len(d.values), budget))
		budget /= k
		if d.ordered {
			start := c.rng.IntN(len(d.values) - k + 1)
			for j := range k {
				picked[i] = append(picked[i], start+j)
			}
		} else {
			picked[i] = c.rng.Perm(len(d.values))[:k]
			slices.Sort(picked[i])
		}
	}
	// Every combination of the picked values, the first dimension outermost.
	combos := [][]int{{}}
	for _, values := range picked {
		var next [][]int
		for _, combo := range combos {
			for _, v := range values {
				next = append(next, append(slices.Clone(combo), v))
			}
		}
		combos = next
	}
	adjust := func(combo []int) int {
		total := 0
		for i, v := range combo {
			if dims[i].adjust != nil {
				total += dims[i].adjust[v]
			}
		}
		return total
	}
	ref := adjust(combos[0])
	for _, combo := range combos[1:] {
		ref = min(ref, adjust(combo))
	}

	out := make([]store.StockedVariant, len(combos))
	for n, combo := range combos {
		sku := fmt.Sprintf("%s-%06d", code, seq)
		var names []string
		v := schema.Variant{Position: n + 1}
		for i, idx := range combo {
			value := dims[i].values[idx]
			v.Options = append(v.Options, schema.Option{Name: dims[i].name, Value: value})
			names = append(names, value)
			sku += "-" + valueCode(value)
		}
		v.SKU = sku
		v.Title = strings.Join(names, " / ")
		if len(combo) == 0 {
			v.Title = "Default"
		}
		if a := adjust(combo); a != ref {
			usd := charm(base * int64(100+a) / int64(100+ref))
			v.Prices = schema.Prices{"USD": usd}
			if withEUR {
				v.Prices["EUR"] = eur(usd)
			}
		}
		out[n] = store.StockedVariant{Variant: v, Stock: c.stock()}
	}
	return out
}

// stock draws a stock level: about 8% out of stock, 12% low (1–5), the rest plenty.
func (c *catalog) stock() int64 {
	switch r := c.rng.IntN(100); {
	case r < 8:
		return 0
	case r < 20:
		return 1 + c.rng.Int64N(5)
	default:
		return 6 + min(c.rng.Int64N(400), c.rng.Int64N(400))
	}
}

// valueCode abbreviates an option value for a SKU: "M" → "M", "Navy" → "NAV", "Heather Grey"
// → "HG", "0.6 L" → "06L", "US 10" → "US10". Within one dimension the codes are distinct (the
// vocabulary test checks it).
func valueCode(value string) string {
	tokens := strings.FieldsFunc(strings.ToUpper(value), func(r rune) bool {
		return !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	})
	if len(tokens) == 1 {
		t := tokens[0]
		if strings.Trim(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == "" && len(t) > 3 {
			return t[:3]
		}
		return t
	}
	var b strings.Builder
	for _, t := range tokens {
		if strings.Trim(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == "" && len(t) > 2 {
			b.WriteByte(t[0])
		} else {
			b.WriteString(t)
		}
	}
	return b.String()
}
