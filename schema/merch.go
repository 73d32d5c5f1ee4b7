package schema

import (
	"bytes"
	"encoding/json"
	"time"
)

// Merchandising entities: flash sales, storefront sections, approved reviews and social-proof
// statistics. All are public and replicated; the edge answers their routes from the replica.
type (
	FlashSaleID int64
	SectionID   int64
	ReviewID    int64
)

// Replicated kinds of this file.
const (
	KindFlashSale Kind = "flashsale"
	KindSection   Kind = "section"
	KindReview    Kind = "review"
	KindStats     Kind = "stats"
)

// FlashSale takes PercentOff off the prices of its products between StartsAt (inclusive) and
// EndsAt (exclusive). An empty ProductIDs list means every product of the store. When several
// sales cover a product at once, the largest discount applies.
type FlashSale struct {
	ID         FlashSaleID `json:"id"`
	Slug       string      `json:"slug"`
	Title      string      `json:"title"`
	PercentOff int64       `json:"percent_off"` // basis points: 2500 = 25%
	ProductIDs []ProductID `json:"product_ids"`
	StartsAt   time.Time   `json:"starts_at"`
	EndsAt     time.Time   `json:"ends_at"`
	CreatedAt  time.Time   `json:"created_at"`
	UpdatedAt  time.Time   `json:"updated_at"`
	Version    int64       `json:"version"`
}

// MaxFlashSaleProducts bounds a sale's product list.
const MaxFlashSaleProducts = 1000

// ActiveAt reports whether the sale runs at t.
func (f *FlashSale) ActiveAt(t time.Time) bool { return !t.Before(f.StartsAt) && t.Before(f.EndsAt) }

// Covers reports whether the sale applies to product p.
func (f *FlashSale) Covers(p ProductID) bool {
	if len(f.ProductIDs) == 0 {
		return true
	}
	for _, id := range f.ProductIDs {
		if id == p {
			return true
		}
	}
	return false
}

// ValidateFlashSale checks a flash sale.
func ValidateFlashSale(f *FlashSale) error {
	if err := ValidateSlug("slug", f.Slug, nil); err != nil {
		return err
	}
	if err := ValidateText("title", f.Title, 200, true); err != nil {
		return err
	}
	if f.PercentOff < 1 || f.PercentOff > 9_999 {
		return Invalid("percent_off", "percent_off is in basis points: 1 to 9999 (2500 = 25%%)")
	}
	if f.StartsAt.IsZero() || f.EndsAt.IsZero() || !f.EndsAt.After(f.StartsAt) {
		return Invalid("ends_at", "starts_at and ends_at are required, and ends_at must be after starts_at")
	}
	if len(f.ProductIDs) > MaxFlashSaleProducts {
		return Invalid("product_ids", "a flash sale lists at most %d products", int64(MaxFlashSaleProducts))
	}
	if f.ProductIDs == nil {
		f.ProductIDs = []ProductID{}
	}
	return nil
}

// SalePrice is amount with basis points bp off, rounded half away from zero to the minor unit:
// exact for every amount up to MaxMinorAmount.
func SalePrice(amount, bp int64) int64 {
	if amount <= 0 || bp <= 0 {
		return amount
	}
	return amount - mulDivRound(amount, bp, basisPointsWhole)
}

// BestSale returns the largest discount among sales covering product p at t (0 when none), and
// the earliest end among the sales giving it.
func BestSale(sales []*FlashSale, p ProductID, t time.Time) (bp int64, ends time.Time) {
	for _, f := range sales {
		if !f.ActiveAt(t) || !f.Covers(p) {
			continue
		}
		if f.PercentOff > bp || (f.PercentOff == bp && f.EndsAt.Before(ends)) {
			bp, ends = f.PercentOff, f.EndsAt
		}
	}
	return bp, ends
}

// NextSaleTransition returns the first start or end of a sale strictly after t, or the zero time
// when there is none: the instant cached prices must expire.
func NextSaleTransition(sales []*FlashSale, t time.Time) time.Time {
	var next time.Time
	for _, f := range sales {
		for _, at := range [2]time.Time{f.StartsAt, f.EndsAt} {
			if at.After(t) && (next.IsZero() || at.Before(next)) {
				next = at
			}
		}
	}
	return next
}

// Section kinds.
var SectionKinds = []string{"hero", "collection", "banner", "products", "text"}

// Section is a merchant-defined block of the storefront's home page. Content is the kind's own
// JSON object (a hero's image and call to action, a collection's category, a products list's
// ids), passed through to the storefront as the merchant wrote it.
type Section struct {
	ID        SectionID       `json:"id"`
	Kind      string          `json:"kind"`
	Title     string          `json:"title"`
	Position  int             `json:"position"`
	Content   json.RawMessage `json:"content"`
	Active    bool            `json:"active"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
	Version   int64           `json:"version"`
}

// MaxSectionContent bounds a section's content.
const MaxSectionContent = 16 << 10

// ValidateSection checks a section.
func ValidateSection(s *Section) error {
	ok := false
	for _, k := range SectionKinds {
		ok = ok || s.Kind == k
	}
	if !ok {
		return Invalid("kind", "kind must be one of hero, collection, banner, products, text")
	}
	if err := ValidateText("title", s.Title, 200, false); err != nil {
		return err
	}
	if len(s.Content) == 0 {
		s.Content = json.RawMessage("{}")
	}
	if len(s.Content) > MaxSectionContent {
		return Invalid("content", "content is at most 16 KiB of JSON")
	}
	norm, err := NormalizeJSONObject(s.Content)
	if err != nil {
		return Invalid("content", "content must be a JSON object")
	}
	s.Content = norm
	return nil
}

// NormalizeJSONObject returns a JSON object compact, with its keys sorted at every level and its
// numbers kept as written: one form for the same content, whether it comes from a request or back
// from a JSONB column (which orders keys its own way).
func NormalizeJSONObject(raw []byte) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return nil, Invalid("content", "content must be a JSON object")
	}
	if dec.More() {
		return nil, Invalid("content", "content must be one JSON object")
	}
	return json.Marshal(obj)
}

// Review is an approved product review as replicated: no customer id, no email.
type Review struct {
	ID        ReviewID  `json:"id"`
	ProductID ProductID `json:"product_id"`
	Author    string    `json:"author"`
	Rating    int       `json:"rating"`
	Title     string    `json:"title"`
	Body      string    `json:"body"`
	// Verified is true when the author bought the product in this store.
	Verified  bool      `json:"verified_purchase"`
	CreatedAt time.Time `json:"created_at"`
	Version   int64     `json:"version"`
}

// ProductStats is a product's social proof, computed at the origin and replicated only when a
// value changes.
type ProductStats struct {
	ProductID    ProductID `json:"product_id"`
	Purchases7d  int64     `json:"purchases_7d"`
	Purchases30d int64     `json:"purchases_30d"`
	ReviewCount  int64     `json:"review_count"`
	RatingSum    int64     `json:"rating_sum"`
	UpdatedAt    time.Time `json:"updated_at"`
	Version      int64     `json:"version"`
}

// SocialProofView is GET /api/products/{id}/social-proof.
type SocialProofView struct {
	ProductID    ProductID `json:"product_id"`
	Purchases7d  int64     `json:"purchases_7d"`
	Purchases30d int64     `json:"purchases_30d"`
	ReviewCount  int64     `json:"review_count"`
	// AverageRating is the mean approved rating as a decimal string with one digit ("4.3"), or
	// null without reviews.
	AverageRating *string   `json:"average_rating"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// RenderSocialProof renders a product's stats (nil: none yet, all zero).
func RenderSocialProof(id ProductID, s *ProductStats) SocialProofView {
	v := SocialProofView{ProductID: id}
	if s == nil {
		return v
	}
	v.Purchases7d, v.Purchases30d, v.ReviewCount, v.UpdatedAt = s.Purchases7d, s.Purchases30d, s.ReviewCount, s.UpdatedAt
	if s.ReviewCount > 0 {
		avg := FormatMinor(mulDivRound(s.RatingSum, 10, s.ReviewCount), 1)
		v.AverageRating = &avg
	}
	return v
}
