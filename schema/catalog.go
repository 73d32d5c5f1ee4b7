package schema

import (
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Typed identifiers keep one kind of id from being passed where another belongs. Catalog ids are
// per-tenant integers from the tenant's id allocator.
type (
	ProductID  int64
	VariantID  int64
	CategoryID int64
)

// ProductStatus is a product's publication state. Only active products are public.
type ProductStatus string

// Product statuses.
const (
	ProductActive   ProductStatus = "active"
	ProductDraft    ProductStatus = "draft"
	ProductArchived ProductStatus = "archived"
)

// Availability is what the public replica knows of stock: never the count, only the class. It is
// replicated when stock crosses a threshold, so checkout does not bump the log per order.
type Availability string

// Availability classes.
const (
	InStock    Availability = "in_stock"
	LowStock   Availability = "low_stock"
	OutOfStock Availability = "out_of_stock"
)

// DefaultLowStockThreshold is the stock level at or under which a variant is low_stock.
const DefaultLowStockThreshold = 5

// AvailabilityOf classifies a stock level.
func AvailabilityOf(stock, lowThreshold int64) Availability {
	switch {
	case stock <= 0:
		return OutOfStock
	case stock <= lowThreshold:
		return LowStock
	default:
		return InStock
	}
}

// Prices maps a currency code to an amount in that currency's minor units.
type Prices map[string]int64

// Image is a product image. URL is absolute (merchants host images on their CDN).
type Image struct {
	URL    string `json:"url"`
	Alt    string `json:"alt"`
	Width  int    `json:"width,omitempty"`
	Height int    `json:"height,omitempty"`
}

// Product is a catalog product as replicated. Its purchasable units are its variants.
type Product struct {
	ID          ProductID     `json:"id"`
	Slug        string        `json:"slug"`
	Title       string        `json:"title"`
	Description string        `json:"description"`
	Status      ProductStatus `json:"status"`
	Featured    bool          `json:"featured"`
	Prices      Prices        `json:"prices"`
	Images      []Image       `json:"images"`
	CategoryIDs []CategoryID  `json:"category_ids"`
	CreatedAt   time.Time     `json:"created_at"`
	UpdatedAt   time.Time     `json:"updated_at"`
	Version     int64         `json:"version"`
}

// Public reports whether the product belongs to the public read model.
func (p *Product) Public() bool { return p.Status == ProductActive }

// Option is one option value of a variant ("size": "M"). Order is the merchant's.
type Option struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Variant is a purchasable unit of a product. The stock count stays at the origin; the replica
// carries Availability only.
type Variant struct {
	ID        VariantID `json:"id"`
	ProductID ProductID `json:"product_id"`
	SKU       string    `json:"sku"`
	Title     string    `json:"title"`
	Options   []Option  `json:"options"`
	// Prices overrides the product's price per currency; a currency absent here uses the
	// product's price.
	Prices       Prices       `json:"prices"`
	Availability Availability `json:"availability"`
	Position     int          `json:"position"`
	CreatedAt    time.Time    `json:"created_at"`
	UpdatedAt    time.Time    `json:"updated_at"`
	Version      int64        `json:"version"`
}

// Category is a node of the tenant's category tree. ParentID 0 is a root.
type Category struct {
	ID          CategoryID `json:"id"`
	ParentID    CategoryID `json:"parent_id"`
	Slug        string     `json:"slug"`
	Name        string     `json:"name"`
	Description string     `json:"description"`
	Position    int        `json:"position"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
	Version     int64      `json:"version"`
}

// Currency describes one enabled currency of a tenant.
type Currency struct {
	Code string `json:"code"`
	Name string `json:"name"`
	// Symbol is the display symbol ("$", "€", "¥").
	Symbol string `json:"symbol"`
	// Exponent is the number of minor-unit digits (JPY 0, USD 2, KWD 3).
	Exponent int `json:"exponent"`
	// Rate converts from the store's default currency: 1 default = Rate of this currency. A
	// decimal string, never a float.
	Rate      string    `json:"rate"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	Version   int64     `json:"version"`
}

// Field limits of catalog entities.
const (
	MaxSlugLen        = 200
	MaxTitleLen       = 500
	MaxDescriptionLen = 100_000
	MaxImages         = 50
	MaxCategoriesPer  = 50
	MaxOptions        = 10
	MaxSKULen         = 100
	MaxMinorAmount    = 1_000_000_000_000_000 // 10^15 minor units: far above any real price, far below int64 overflow
	MaxCategoryDepth  = 8
)

// ValidateSlug checks an entity slug: 1–200 characters of [a-z0-9-], no leading or trailing
// hyphen, and not one of reserved (static path segments that would shadow the slug).
func ValidateSlug(field, s string, reserved []string) error {
	if len(s) == 0 || len(s) > MaxSlugLen {
		return Invalid(field, "%s must be 1 to %d characters", field, MaxSlugLen)
	}
	if s[0] == '-' || s[len(s)-1] == '-' {
		return Invalid(field, "%s must not start or end with a hyphen", field)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return Invalid(field, "%s may contain only a-z, 0-9 and hyphens", field)
		}
	}
	for _, r := range reserved {
		if s == r {
			return Invalid(field, "%s %q is reserved", field, s)
		}
	}
	return nil
}

// Slugify derives a slug from a title: lowercase ASCII letters and digits, other runs become one
// hyphen. It returns "" when nothing usable remains.
func Slugify(title string) string {
	var b strings.Builder
	hyphen := false
	for _, r := range strings.ToLower(title) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			if hyphen && b.Len() > 0 {
				b.WriteByte('-')
			}
			hyphen = false
			b.WriteRune(r)
		default:
			hyphen = true
		}
		if b.Len() >= MaxSlugLen {
			break
		}
	}
	out := b.String()
	if len(out) > MaxSlugLen {
		out = out[:MaxSlugLen]
	}
	return strings.Trim(out, "-")
}

// ValidateText checks a free-text field: valid UTF-8, no NUL, at most max bytes, and non-empty
// when required.
func ValidateText(field, s string, max int, required bool) error {
	if required && strings.TrimSpace(s) == "" {
		return Invalid(field, "%s is required", field)
	}
	if len(s) > max {
		return Invalid(field, "%s must be at most %d bytes", field, max)
	}
	if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
		return Invalid(field, "%s must be valid UTF-8 text", field)
	}
	return nil
}

// ValidateCurrencyCode checks an ISO 4217-shaped code: three uppercase ASCII letters.
func ValidateCurrencyCode(c string) error {
	if len(c) != 3 {
		return Invalid("currency", "currency code must be three uppercase letters")
	}
	for i := 0; i < 3; i++ {
		if c[i] < 'A' || c[i] > 'Z' {
			return Invalid("currency", "currency code must be three uppercase letters")
		}
	}
	return nil
}

// ValidatePrices checks a price map: known-shaped codes and amounts in [0, MaxMinorAmount].
func ValidatePrices(field string, p Prices, required bool) error {
	if required && len(p) == 0 {
		return Invalid(field, "%s must have at least one currency", field)
	}
	for code, amount := range p {
		if err := ValidateCurrencyCode(code); err != nil {
			return Invalid(field, "%s: %q is not a currency code", field, code)
		}
		if amount < 0 || amount > MaxMinorAmount {
			return Invalid(field, "%s.%s must be between 0 and %d minor units", field, code, int64(MaxMinorAmount))
		}
	}
	return nil
}

// ValidateImages checks image references.
func ValidateImages(imgs []Image) error {
	if len(imgs) > MaxImages {
		return Invalid("images", "at most %d images", MaxImages)
	}
	for i, im := range imgs {
		u, err := url.Parse(im.URL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || len(im.URL) > 2000 {
			return Invalid("images", "images[%d].url must be an absolute http(s) URL", i)
		}
		if err := ValidateText("images", im.Alt, 1000, false); err != nil {
			return err
		}
		if im.Width < 0 || im.Height < 0 || im.Width > 100_000 || im.Height > 100_000 {
			return Invalid("images", "images[%d] has an impossible size", i)
		}
	}
	return nil
}

// ValidateProduct checks a product before it is written. reserved lists slugs that routes shadow.
func ValidateProduct(p *Product, reserved []string) error {
	if err := ValidateSlug("slug", p.Slug, reserved); err != nil {
		return err
	}
	if err := ValidateText("title", p.Title, MaxTitleLen, true); err != nil {
		return err
	}
	if err := ValidateText("description", p.Description, MaxDescriptionLen, false); err != nil {
		return err
	}
	switch p.Status {
	case ProductActive, ProductDraft, ProductArchived:
	default:
		return Invalid("status", "status must be one of active, draft, archived")
	}
	if err := ValidatePrices("prices", p.Prices, true); err != nil {
		return err
	}
	if err := ValidateImages(p.Images); err != nil {
		return err
	}
	if len(p.CategoryIDs) > MaxCategoriesPer {
		return Invalid("category_ids", "at most %d categories", MaxCategoriesPer)
	}
	seen := map[CategoryID]bool{}
	for _, c := range p.CategoryIDs {
		if c <= 0 {
			return Invalid("category_ids", "category ids must be positive")
		}
		if seen[c] {
			return Invalid("category_ids", "category %d is listed twice", c)
		}
		seen[c] = true
	}
	return nil
}

// ValidateVariant checks a variant before it is written.
func ValidateVariant(v *Variant) error {
	if err := ValidateText("sku", v.SKU, MaxSKULen, true); err != nil {
		return err
	}
	for i := 0; i < len(v.SKU); i++ {
		if v.SKU[i] <= ' ' || v.SKU[i] == 0x7f {
			return Invalid("sku", "sku must not contain spaces or control characters")
		}
	}
	if err := ValidateText("title", v.Title, MaxTitleLen, false); err != nil {
		return err
	}
	if len(v.Options) > MaxOptions {
		return Invalid("options", "at most %d options", MaxOptions)
	}
	names := map[string]bool{}
	for _, o := range v.Options {
		if err := ValidateText("options", o.Name, 100, true); err != nil {
			return err
		}
		if err := ValidateText("options", o.Value, 200, true); err != nil {
			return err
		}
		if names[o.Name] {
			return Invalid("options", "option %q is given twice", o.Name)
		}
		names[o.Name] = true
	}
	if err := ValidatePrices("prices", v.Prices, false); err != nil {
		return err
	}
	if v.Position < 0 || v.Position > 1_000_000 {
		return Invalid("position", "position must be between 0 and 1000000")
	}
	return nil
}

// ValidateCategory checks a category before it is written.
func ValidateCategory(c *Category) error {
	if err := ValidateSlug("slug", c.Slug, nil); err != nil {
		return err
	}
	if err := ValidateText("name", c.Name, MaxTitleLen, true); err != nil {
		return err
	}
	if err := ValidateText("description", c.Description, MaxDescriptionLen, false); err != nil {
		return err
	}
	if c.ParentID < 0 {
		return Invalid("parent_id", "parent_id must be 0 (root) or a category id")
	}
	if c.ParentID != 0 && c.ParentID == c.ID {
		return Invalid("parent_id", "a category cannot be its own parent")
	}
	if c.Position < 0 || c.Position > 1_000_000 {
		return Invalid("position", "position must be between 0 and 1000000")
	}
	return nil
}

// ValidateCurrency checks a currency before it is written.
func ValidateCurrency(c *Currency) error {
	if err := ValidateCurrencyCode(c.Code); err != nil {
		return err
	}
	if err := ValidateText("name", c.Name, 100, true); err != nil {
		return err
	}
	if err := ValidateText("symbol", c.Symbol, 10, false); err != nil {
		return err
	}
	if c.Exponent < 0 || c.Exponent > 4 {
		return Invalid("exponent", "exponent must be between 0 and 4")
	}
	if _, err := ParseRate(c.Rate); err != nil {
		return err
	}
	return nil
}

// ParseRate validates a decimal exchange rate ("1", "0.9182", "151.2") and returns it in
// canonical form: at most 12 fractional digits, positive, no exponent, no sign.
func ParseRate(s string) (string, error) {
	bad := Invalid("rate", "rate must be a positive decimal number such as 1.0825")
	if s == "" || len(s) > 30 {
		return "", bad
	}
	intPart, frac, hasDot := strings.Cut(s, ".")
	if intPart == "" || (hasDot && frac == "") || len(frac) > 12 {
		return "", bad
	}
	for _, part := range []string{intPart, frac} {
		for i := 0; i < len(part); i++ {
			if part[i] < '0' || part[i] > '9' {
				return "", bad
			}
		}
	}
	intPart = strings.TrimLeft(intPart, "0")
	if intPart == "" {
		intPart = "0"
	}
	frac = strings.TrimRight(frac, "0")
	if intPart == "0" && frac == "" {
		return "", bad
	}
	if frac == "" {
		return intPart, nil
	}
	return intPart + "." + frac, nil
}

// FormatMinor renders an amount of minor units as a decimal string with exponent fractional
// digits: FormatMinor(1999, 2) = "19.99", FormatMinor(500, 0) = "500", FormatMinor(-5, 3) =
// "-0.005".
func FormatMinor(amount int64, exponent int) string {
	var buf [32]byte
	return string(AppendMinor(buf[:0], amount, exponent))
}

// AppendMinor appends FormatMinor(amount, exponent) to dst.
func AppendMinor(dst []byte, amount int64, exponent int) []byte {
	neg := amount < 0
	u := uint64(amount)
	if neg {
		u = uint64(-amount)
		dst = append(dst, '-')
	}
	if exponent <= 0 {
		return strconv.AppendUint(dst, u, 10)
	}
	var digits [24]byte
	d := strconv.AppendUint(digits[:0], u, 10)
	for len(d) <= exponent {
		d = append([]byte{'0'}, d...)
	}
	cut := len(d) - exponent
	dst = append(dst, d[:cut]...)
	dst = append(dst, '.')
	return append(dst, d[cut:]...)
}

// SortedCurrencyCodes returns the keys of p in order, for deterministic rendering.
func SortedCurrencyCodes(p Prices) []string {
	codes := make([]string, 0, len(p))
	for c := range p {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	return codes
}

// Normalize replaces nil collections with empty ones, so that a value encodes the same whether it
// was built by a writer or read back from the database.
func (p *Product) Normalize() {
	if p.Prices == nil {
		p.Prices = Prices{}
	}
	if p.Images == nil {
		p.Images = []Image{}
	}
	if p.CategoryIDs == nil {
		p.CategoryIDs = []CategoryID{}
	}
}

// Normalize replaces nil collections with empty ones (see Product.Normalize).
func (v *Variant) Normalize() {
	if v.Prices == nil {
		v.Prices = Prices{}
	}
	if v.Options == nil {
		v.Options = []Option{}
	}
}
