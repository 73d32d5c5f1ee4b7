package schema

import (
	"crypto/rand"
	"strings"
	"time"
)

// CartLineView is one line of a cart or an order as the commerce interface shows it.
type CartLineView struct {
	// ID addresses the line in /api/cart/items/{item}: the variant id.
	ID           string       `json:"id"`
	VariantID    VariantID    `json:"variant_id"`
	ProductID    ProductID    `json:"product_id"`
	Slug         string       `json:"slug"`
	Title        string       `json:"title"`
	VariantTitle string       `json:"variant_title"`
	SKU          string       `json:"sku"`
	Options      []Option     `json:"options"`
	Image        *Image       `json:"image"`
	UnitPrice    Money        `json:"unit_price"`
	Quantity     int64        `json:"quantity"`
	Subtotal     Money        `json:"subtotal"`
	Discount     Money        `json:"discount"`
	Tax          Money        `json:"tax"`
	Total        Money        `json:"total"`
	Availability Availability `json:"availability,omitempty"`
	// OnSale is true when UnitPrice is a flash sale's price; CompareAt is then the regular price.
	OnSale    bool   `json:"on_sale,omitempty"`
	CompareAt *Money `json:"compare_at,omitempty"`
}

// TotalsView is the money of a cart or an order.
type TotalsView struct {
	Subtotal Money `json:"subtotal"`
	Discount Money `json:"discount"`
	Shipping Money `json:"shipping"`
	Tax      Money `json:"tax"`
	// TaxInclusive says prices include tax (VAT style): Tax is contained in Total, not added.
	TaxInclusive bool  `json:"tax_inclusive"`
	Total        Money `json:"total"`
	GiftCards    Money `json:"gift_cards"`
	// Due is what the payment provider charges: Total minus gift cards.
	Due Money `json:"due"`
}

// AppliedCoupon is a coupon on a cart or an order.
type AppliedCoupon struct {
	Code         string `json:"code"`
	Discount     Money  `json:"discount"`
	FreeShipping bool   `json:"free_shipping"`
}

// AppliedGiftCard is a gift card on a cart or an order. Only its last four characters are shown.
type AppliedGiftCard struct {
	Last4 string `json:"last4"`
	// Balance is the card's balance before this cart (carts only).
	Balance *Money `json:"balance,omitempty"`
	Applied Money  `json:"applied"`
}

// ShippingOption is a shipping method offered to a cart.
type ShippingOption struct {
	Code  string `json:"code"`
	Name  string `json:"name"`
	Price Money  `json:"price"`
	// Free is true when the cart qualifies for free shipping with this method.
	Free bool `json:"free"`
}

// CartIssue is a problem that blocks checkout until the shopper acts: a line out of stock, a
// product withdrawn, a coupon no longer valid. Carts report issues rather than silently dropping
// lines or discounts.
type CartIssue struct {
	// Item is the line's id, when the issue is about a line.
	Item string `json:"item,omitempty"`
	// Code is one of out_of_stock, insufficient_stock, unavailable, unpriced, coupon_invalid,
	// gift_card_invalid, shipping_method_invalid.
	Code    string `json:"code"`
	Message string `json:"message"`
	// Available is the quantity that can be bought, for insufficient_stock.
	Available *int64 `json:"available,omitempty"`
}

// CartView is a cart as the commerce interface shows it.
type CartView struct {
	Currency        string            `json:"currency"`
	Items           []CartLineView    `json:"items"`
	ItemCount       int64             `json:"item_count"`
	Coupons         []AppliedCoupon   `json:"coupons"`
	GiftCards       []AppliedGiftCard `json:"gift_cards"`
	ShippingMethod  *ShippingOption   `json:"shipping_method"`
	ShippingMethods []ShippingOption  `json:"shipping_methods"`
	Notes           string            `json:"notes"`
	GiftWrap        bool              `json:"gift_wrap"`
	GiftMessage     string            `json:"gift_message"`
	Totals          TotalsView        `json:"totals"`
	Issues          []CartIssue       `json:"issues"`
	// Revision increases with every change of the cart; 0 for a cart that does not exist yet.
	Revision  int64      `json:"revision"`
	ExpiresAt *time.Time `json:"expires_at"`
}

// Address is a postal address of an order or a customer.
type Address struct {
	Name       string `json:"name"`
	Company    string `json:"company,omitempty"`
	Line1      string `json:"line1"`
	Line2      string `json:"line2,omitempty"`
	City       string `json:"city"`
	Region     string `json:"region,omitempty"`
	PostalCode string `json:"postal_code"`
	// Country is an ISO 3166-1 alpha-2 code ("US").
	Country string `json:"country"`
	Phone   string `json:"phone,omitempty"`
}

// ValidateAddress checks an address; field prefixes error fields ("shipping_address").
func ValidateAddress(field string, a *Address) error {
	checks := []struct {
		name, v  string
		max      int
		required bool
	}{
		{"name", a.Name, 200, true}, {"company", a.Company, 200, false}, {"line1", a.Line1, 200, true},
		{"line2", a.Line2, 200, false}, {"city", a.City, 100, true}, {"region", a.Region, 100, false},
		{"postal_code", a.PostalCode, 20, false}, {"phone", a.Phone, 40, false},
	}
	for _, c := range checks {
		if err := ValidateText(field+"."+c.name, c.v, c.max, c.required); err != nil {
			return err
		}
	}
	if len(a.Country) != 2 || a.Country[0] < 'A' || a.Country[0] > 'Z' || a.Country[1] < 'A' || a.Country[1] > 'Z' {
		return Invalid(field+".country", "%s.country must be an ISO 3166-1 alpha-2 code in capitals (\"US\")", field)
	}
	return nil
}

// Order statuses.
const (
	OrderPendingPayment = "pending_payment" // stock reserved, payment not yet authorized
	OrderPaid           = "paid"            // payment authorized (or nothing due)
	OrderPaymentFailed  = "payment_failed"  // payment declined; reservations released
	OrderCancelled      = "cancelled"       // abandoned before payment; reservations released
	OrderRefunded       = "refunded"
	// OrderPartiallyRefunded: paid, and some of it refunded.
	OrderPartiallyRefunded = "partially_refunded"
)

// OrderView is an order as the commerce interface shows it to its owner.
type OrderView struct {
	Reference         string            `json:"reference"`
	Status            string            `json:"status"`
	FulfillmentStatus string            `json:"fulfillment_status"`
	Email             string            `json:"email"`
	Currency          string            `json:"currency"`
	Items             []CartLineView    `json:"items"`
	Coupons           []AppliedCoupon   `json:"coupons"`
	GiftCards         []AppliedGiftCard `json:"gift_cards"`
	ShippingMethod    *ShippingOption   `json:"shipping_method"`
	ShippingAddress   Address           `json:"shipping_address"`
	BillingAddress    Address           `json:"billing_address"`
	Notes             string            `json:"notes"`
	GiftWrap          bool              `json:"gift_wrap"`
	GiftMessage       string            `json:"gift_message"`
	Totals            TotalsView        `json:"totals"`
	TrackingURL       string            `json:"tracking_url"`
	CreatedAt         time.Time         `json:"created_at"`
	UpdatedAt         time.Time         `json:"updated_at"`
}

// Order references: 16 characters of Crockford's base32 (80 random bits) in four groups of four,
// "7KQF-3M9X-A2BD-HX4P". They are unguessable: at a billion orders, a random guess hits one with
// probability under 1e-15.
const (
	referenceAlphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	referenceChars    = 16
	// ReferenceLen is the length of a reference with its hyphens.
	ReferenceLen = referenceChars + 3
)

// NewOrderReference returns a new random order reference.
func NewOrderReference() string {
	var raw [10]byte // 80 bits
	if _, err := rand.Read(raw[:]); err != nil {
		panic("schema: crypto/rand: " + err.Error())
	}
	var b strings.Builder
	var acc uint64
	bitsIn := 0
	n := 0
	for _, c := range raw {
		acc = acc<<8 | uint64(c)
		bitsIn += 8
		for bitsIn >= 5 {
			bitsIn -= 5
			if n > 0 && n%4 == 0 {
				b.WriteByte('-')
			}
			b.WriteByte(referenceAlphabet[(acc>>bitsIn)&31])
			n++
		}
	}
	return b.String()
}

// NormalizeOrderReference returns the canonical form of a reference as a shopper may type it
// (lowercase, without hyphens, with O for 0 or I/L for 1, as Crockford's base32 allows), and
// false when it cannot be a reference.
func NormalizeOrderReference(s string) (string, bool) {
	if len(s) > 2*ReferenceLen {
		return "", false
	}
	var out []byte
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '-' || c == ' ':
			continue
		case c >= 'a' && c <= 'z':
			c -= 'a' - 'A'
		}
		switch c {
		case 'O':
			c = '0'
		case 'I', 'L':
			c = '1'
		}
		if strings.IndexByte(referenceAlphabet, c) < 0 {
			return "", false
		}
		if n == referenceChars {
			return "", false
		}
		if n > 0 && n%4 == 0 {
			out = append(out, '-')
		}
		out = append(out, c)
		n++
	}
	if len(out) != ReferenceLen {
		return "", false
	}
	return string(out), true
}
