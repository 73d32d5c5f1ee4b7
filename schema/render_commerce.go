package schema

import (
	"cmp"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Money is a price as the commerce interface shows it.
type Money struct {
	// Amount is in the currency's minor units.
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
	// Formatted is the amount as a decimal string with the currency's exponent ("19.99").
	Formatted string `json:"formatted"`
	// Converted is true when the merchant set no price in this currency and the amount was
	// converted from the default currency at the currency's rate.
	Converted bool `json:"converted,omitempty"`
}

// CategoryRef is a category as embedded in a product.
type CategoryRef struct {
	ID   CategoryID `json:"id"`
	Slug string     `json:"slug"`
	Name string     `json:"name"`
}

// ProductView is the commerce interface's product.
type ProductView struct {
	ID          ProductID `json:"id"`
	Slug        string    `json:"slug"`
	Title       string    `json:"title"`
	Description *string   `json:"description,omitempty"`
	Featured    bool      `json:"featured"`
	Price       Money     `json:"price"`
	// CompareAt is the regular price while a flash sale lowers Price, until SaleEndsAt.
	CompareAt  *Money        `json:"compare_at,omitempty"`
	SaleEndsAt *time.Time    `json:"sale_ends_at,omitempty"`
	Images     []Image       `json:"images"`
	Categories []CategoryRef `json:"categories"`
	// Availability is the best availability of the product's variants.
	Availability  Availability `json:"availability"`
	VariantsCount int          `json:"variants_count"`
	URL           string       `json:"url"`
	CreatedAt     time.Time    `json:"created_at"`
	UpdatedAt     time.Time    `json:"updated_at"`
	Version       int64        `json:"version"`
}

// VariantView is the commerce interface's variant.
type VariantView struct {
	ID           VariantID    `json:"id"`
	SKU          string       `json:"sku"`
	Title        string       `json:"title"`
	Options      []Option     `json:"options"`
	Price        Money        `json:"price"`
	CompareAt    *Money       `json:"compare_at,omitempty"`
	SaleEndsAt   *time.Time   `json:"sale_ends_at,omitempty"`
	Availability Availability `json:"availability"`
	Position     int          `json:"position"`
	Version      int64        `json:"version"`
}

// CategoryNode is a category in the tree the commerce interface returns.
type CategoryNode struct {
	ID          CategoryID      `json:"id"`
	ParentID    CategoryID      `json:"parent_id"`
	Slug        string          `json:"slug"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Position    int             `json:"position"`
	Children    []*CategoryNode `json:"children"`
}

// CurrencyView is a currency as the commerce interface lists it.
type CurrencyView struct {
	Code     string `json:"code"`
	Name     string `json:"name"`
	Symbol   string `json:"symbol"`
	Exponent int    `json:"exponent"`
	Rate     string `json:"rate"`
	Default  bool   `json:"default"`
}

// Page is the envelope of a paginated commerce list.
type Page[T any] struct {
	Data       []T     `json:"data"`
	Page       int     `json:"page"`
	PerPage    int     `json:"per_page"`
	Total      int     `json:"total"`
	TotalPages int     `json:"total_pages"`
	Next       *string `json:"next"`
	Prev       *string `json:"prev"`
}

// List is the envelope of an unpaginated commerce list.
type List[T any] struct {
	Data []T `json:"data"`
}

// Pricing resolves prices in one currency for one tenant.
type Pricing struct {
	// Currency is the currency prices are shown in.
	Currency *Currency
	// Default is the store's default currency, the source of conversions.
	Default *Currency
	// Sales are the store's flash sales, and At the instant prices are shown at: a product
	// covered by a sale running at At shows its sale price, with the regular one as compare_at.
	Sales []*FlashSale
	At    time.Time
}

// onSale applies the best flash sale running at pr.At for product p to m.
func (pr Pricing) onSale(p ProductID, m Money) (Money, *Money, *time.Time) {
	bp, ends := BestSale(pr.Sales, p, pr.At)
	if bp == 0 {
		return m, nil, nil
	}
	regular := m
	m.Amount = SalePrice(m.Amount, bp)
	m.Formatted = FormatMinor(m.Amount, pr.Currency.Exponent)
	return m, &regular, &ends
}

// Price returns the amount of prices in the pricing's currency: the merchant's own price when set,
// else a conversion from the default currency's price, rounded half away from zero to the target
// exponent.
func (pr Pricing) Price(prices Prices) Money {
	cur := pr.Currency
	if a, ok := prices[cur.Code]; ok {
		return Money{Amount: a, Currency: cur.Code, Formatted: FormatMinor(a, cur.Exponent)}
	}
	base, ok := prices[pr.Default.Code]
	if !ok {
		// No price in the default currency either: show the smallest code's price unconverted
		// would mislead; show zero, flagged converted, so a client can hide it.
		return Money{Amount: 0, Currency: cur.Code, Formatted: FormatMinor(0, cur.Exponent), Converted: true}
	}
	a := ConvertMinor(base, pr.Default.Exponent, cur.Exponent, cur.Rate)
	return Money{Amount: a, Currency: cur.Code, Formatted: FormatMinor(a, cur.Exponent), Converted: true}
}

// VariantPrice returns the variant's price: its override in the currency when set, else the
// product's price.
func (pr Pricing) VariantPrice(v *Variant, p *Product) Money {
	if a, ok := v.Prices[pr.Currency.Code]; ok {
		return Money{Amount: a, Currency: pr.Currency.Code, Formatted: FormatMinor(a, pr.Currency.Exponent)}
	}
	// A variant priced in the default currency converts from its own price, not the product's.
	if _, ok := v.Prices[pr.Default.Code]; ok {
		return pr.Price(v.Prices)
	}
	return pr.Price(p.Prices)
}

// ConvertMinor converts amount (minor units at fromExp) at a decimal rate into minor units at
// toExp, rounding half away from zero. Exact: no float is involved.
func ConvertMinor(amount int64, fromExp, toExp int, rate string) int64 {
	num, den := rateFraction(rate)
	n := new(big.Int).Mul(big.NewInt(amount), num)
	d := new(big.Int).Set(den)
	if shift := toExp - fromExp; shift > 0 {
		n.Mul(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(shift)), nil))
	} else if shift < 0 {
		d.Mul(d, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-shift)), nil))
	}
	// Round half away from zero: (2n + d) / 2d for positive n.
	neg := n.Sign() < 0
	n.Abs(n)
	n.Mul(n, big.NewInt(2)).Add(n, d)
	d.Mul(d, big.NewInt(2))
	n.Quo(n, d)
	// Saturate at the amount bound, keeping the sign: a conversion never wraps around.
	if n.Cmp(big.NewInt(MaxMinorAmount)) > 0 {
		n.SetInt64(MaxMinorAmount)
	}
	if neg {
		n.Neg(n)
	}
	return n.Int64()
}

func rateFraction(rate string) (*big.Int, *big.Int) {
	intPart, frac, _ := strings.Cut(rate, ".")
	num, ok := new(big.Int).SetString(intPart+frac, 10)
	if !ok {
		return big.NewInt(1), big.NewInt(1)
	}
	den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(frac))), nil)
	return num, den
}

// BestAvailability is the best class among variants (in stock beats low beats out); a product
// without variants is out of stock.
func BestAvailability(vs []*Variant) Availability {
	best := OutOfStock
	for _, v := range vs {
		switch v.Availability {
		case InStock:
			return InStock
		case LowStock:
			best = LowStock
		}
	}
	return best
}

// RenderProduct builds the commerce view of a product. cats resolves category ids (unknown ids
// are skipped); base is the tenant's canonical base URL. withDescription selects the item form
// (lists omit descriptions).
func RenderProduct(p *Product, vs []*Variant, cats func(CategoryID) *Category, pr Pricing, base string, withDescription bool) ProductView {
	v := ProductView{
		ID:            p.ID,
		Slug:          p.Slug,
		Title:         p.Title,
		Featured:      p.Featured,
		Images:        p.Images,
		Categories:    make([]CategoryRef, 0, len(p.CategoryIDs)),
		Availability:  BestAvailability(vs),
		VariantsCount: len(vs),
		URL:           base + "/api/products/" + p.Slug,
		CreatedAt:     p.CreatedAt,
		UpdatedAt:     p.UpdatedAt,
		Version:       p.Version,
	}
	v.Price, v.CompareAt, v.SaleEndsAt = pr.onSale(p.ID, pr.Price(p.Prices))
	if v.Images == nil {
		v.Images = []Image{}
	}
	if withDescription {
		d := p.Description
		v.Description = &d
	}
	for _, id := range p.CategoryIDs {
		if c := cats(id); c != nil {
			v.Categories = append(v.Categories, CategoryRef{ID: c.ID, Slug: c.Slug, Name: c.Name})
		}
	}
	return v
}

// RenderVariant builds the commerce view of a variant of p.
func RenderVariant(v *Variant, p *Product, pr Pricing) VariantView {
	opts := v.Options
	if opts == nil {
		opts = []Option{}
	}
	vv := VariantView{
		ID: v.ID, SKU: v.SKU, Title: v.Title, Options: opts,
		Availability: v.Availability, Position: v.Position, Version: v.Version,
	}
	vv.Price, vv.CompareAt, vv.SaleEndsAt = pr.onSale(p.ID, pr.VariantPrice(v, p))
	return vv
}

// BuildCategoryTree arranges categories as a forest ordered by position then name. A category
// whose parent is missing (deleted) is shown as a root rather than lost.
func BuildCategoryTree(cats []*Category) []*CategoryNode {
	nodes := make(map[CategoryID]*CategoryNode, len(cats))
	for _, c := range cats {
		nodes[c.ID] = &CategoryNode{ID: c.ID, ParentID: c.ParentID, Slug: c.Slug, Name: c.Name,
			Description: c.Description, Position: c.Position, Children: []*CategoryNode{}}
	}
	roots := []*CategoryNode{}
	for _, c := range cats {
		n := nodes[c.ID]
		if parent, ok := nodes[c.ParentID]; ok && c.ParentID != c.ID {
			parent.Children = append(parent.Children, n)
		} else {
			n.ParentID = 0 // its parent is gone: it is a root now
			roots = append(roots, n)
		}
	}
	var sortNodes func([]*CategoryNode)
	sortNodes = func(ns []*CategoryNode) {
		slices.SortStableFunc(ns, func(a, b *CategoryNode) int {
			return cmp.Or(cmp.Compare(a.Position, b.Position), strings.Compare(a.Name, b.Name), cmp.Compare(a.ID, b.ID))
		})
		for _, n := range ns {
			sortNodes(n.Children)
		}
	}
	sortNodes(roots)
	return roots
}

// PageURL returns the absolute URL of page n of a list at path with the other normalised query
// arguments in query (already encoded, without page).
func PageURL(base, path, query string, n int) string {
	u := base + path + "?"
	if query != "" {
		u += query + "&"
	}
	return u + "page=" + strconv.Itoa(n)
}
