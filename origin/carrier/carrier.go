// Package carrier is the origin's interface to shipping carriers, and a built-in simulated
// carrier that behaves like a real one: rates by weight and zone, UPU S10 tracking numbers with
// their check digit, 4×6 in label PDFs with the tracking number's barcode, and a tracking-event
// timeline that moves only when told to (Advance), so that a test or a demo can make a parcel
// arrive.
//
// Like payments, a label is bought outside any database transaction with an idempotency key: a
// retried purchase with the same key gets the same label and is charged once.
//
// # Invariants
//
//   - Buy with a key bought before returns that label (same tracking number, same rate).
//   - A tracking number's check digit is the S10 one: a mistyped number is recognised as such.
//   - A timeline only moves forward: label_created, in_transit, out_for_delivery, delivered.
package carrier

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strings"
	"time"

	"vitrine/schema"
)

// Parcel is one box to ship.
type Parcel struct {
	// WeightGrams is the parcel's weight (> 0).
	WeightGrams int64
	To          schema.Address
	// Service is "ground" or "express".
	Service string
}

// Rate is a carrier's price for a parcel.
type Rate struct {
	Service  string `json:"service"`
	Zone     int    `json:"zone"`
	Amount   int64  `json:"amount"` // minor units of Currency
	Currency string `json:"currency"`
	// Days is the promised transit time.
	Days int `json:"days"`
}

// LabelRequest is one label purchase.
type LabelRequest struct {
	TenantID string
	// Key is the idempotency key (a shipment's id).
	Key    string
	Parcel Parcel
	// From names the sender on the label (the store).
	From string
	// Reference is printed on the label (the order reference).
	Reference string
	// Return marks a label the customer uses to send goods back (From and To swapped).
	Return bool
}

// Label is a bought label.
type Label struct {
	Carrier        string `json:"carrier"`
	TrackingNumber string `json:"tracking_number"`
	Rate           Rate   `json:"rate"`
	// PDF is the printable label.
	PDF []byte `json:"-"`
}

// Carrier rates parcels and buys labels.
type Carrier interface {
	// Name identifies the carrier ("vitrine-sim").
	Name() string
	Rate(ctx context.Context, p Parcel) (Rate, error)
	// Buy buys a label; a repeated Key returns the same label. An error means the outcome is
	// unknown (retry with the same key).
	Buy(ctx context.Context, r LabelRequest) (Label, error)
}

// Tracking statuses, in the order a parcel goes through them.
const (
	StatusLabelCreated   = "label_created"
	StatusInTransit      = "in_transit"
	StatusOutForDelivery = "out_for_delivery"
	StatusDelivered      = "delivered"
)

// Timeline is the order of tracking statuses.
var Timeline = []string{StatusLabelCreated, StatusInTransit, StatusOutForDelivery, StatusDelivered}

// Next returns the status after s ("" after delivered).
func Next(s string) string {
	for i, x := range Timeline {
		if x == s && i+1 < len(Timeline) {
			return Timeline[i+1]
		}
	}
	return ""
}

// Event is one step of a parcel's tracking.
type Event struct {
	Status      string    `json:"status"`
	At          time.Time `json:"at"`
	Location    string    `json:"location"`
	Description string    `json:"description"`
}

// Sim is the simulated carrier. Its labels are derived from the purchase key with a secret, so
// a repeated key gets the same label without any state, as a real carrier's idempotency does.
type Sim struct {
	// Secret keys the derivation of tracking numbers.
	Secret []byte
	// Currency of its rates (default "USD").
	Currency string
}

// Name implements Carrier.
func (c *Sim) Name() string { return "vitrine-sim" }

// Zone is the simulated zone of a destination: 2–8 within the US by the distance between
// the first digits of the postal codes (the depot is at 0), 9 abroad.
func Zone(to schema.Address) int {
	if !strings.EqualFold(to.Country, "US") {
		return 9
	}
	if to.PostalCode == "" || to.PostalCode[0] < '0' || to.PostalCode[0] > '9' {
		return 8
	}
	return 2 + int(to.PostalCode[0]-'0')*6/9
}

// Rate implements Carrier: a base per service plus a price per started 500 g growing with the
// zone.
func (c *Sim) Rate(_ context.Context, p Parcel) (Rate, error) {
	if p.WeightGrams <= 0 || p.WeightGrams > 70_000 {
		return Rate{}, &schema.Error{Code: schema.CodeInvalid, Field: "weight_grams", Message: "a parcel weighs 1 g to 70 kg"}
	}
	zone := Zone(p.To)
	r := Rate{Service: p.Service, Zone: zone, Currency: c.Currency}
	if r.Currency == "" {
		r.Currency = "USD"
	}
	steps := (p.WeightGrams + 499) / 500
	switch p.Service {
	case "", "ground":
		r.Service, r.Amount, r.Days = "ground", 599+steps*int64(60+15*zone), 1+zone
	case "express":
		r.Amount, r.Days = 1499+steps*int64(110+30*zone), 1+zone/4
	default:
		return Rate{}, &schema.Error{Code: schema.CodeInvalid, Field: "service", Message: "service is ground or express"}
	}
	return r, nil
}

// Buy implements Carrier.
func (c *Sim) Buy(ctx context.Context, r LabelRequest) (Label, error) {
	rate, err := c.Rate(ctx, r.Parcel)
	if err != nil {
		return Label{}, err
	}
	m := hmac.New(sha256.New, c.Secret)
	m.Write([]byte(r.TenantID + "\x00" + r.Key))
	serial := binary.BigEndian.Uint64(m.Sum(nil)) % 100_000_000
	l := Label{Carrier: c.Name(), TrackingNumber: TrackingNumber(serial), Rate: rate}
	if l.PDF, err = labelPDF(r, l); err != nil {
		return Label{}, err
	}
	return l, nil
}

// s10Weights are the UPU S10 check-digit weights of the eight serial digits.
var s10Weights = [8]int{8, 6, 4, 2, 3, 5, 9, 7}

// TrackingNumber is the UPU S10 number of a serial (0 to 99,999,999): "VT", eight digits, the
// check digit, "US".
func TrackingNumber(serial uint64) string {
	digits := fmt.Sprintf("%08d", serial)
	return "VT" + digits + fmt.Sprint(s10Check(digits)) + "US"
}

func s10Check(digits string) int {
	sum := 0
	for i := 0; i < 8; i++ {
		sum += int(digits[i]-'0') * s10Weights[i]
	}
	c := 11 - sum%11
	switch c {
	case 10:
		return 0
	case 11:
		return 5
	}
	return c
}

// ValidTrackingNumber reports whether s is an S10 number of this carrier with a right check
// digit.
func ValidTrackingNumber(s string) bool {
	if len(s) != 13 || !strings.HasPrefix(s, "VT") || !strings.HasSuffix(s, "US") {
		return false
	}
	digits := s[2:10]
	for i := 0; i < 9; i++ {
		if s[2+i] < '0' || s[2+i] > '9' {
			return false
		}
	}
	return int(s[10]-'0') == s10Check(digits)
}

// EventFor describes a parcel reaching status at a time.
func EventFor(status string, to schema.Address, at time.Time) Event {
	e := Event{Status: status, At: at.UTC()}
	switch status {
	case StatusLabelCreated:
		e.Location, e.Description = "Vitrine depot", "Shipping label created; the carrier awaits the parcel"
	case StatusInTransit:
		e.Location, e.Description = "Regional sort centre", "In transit"
	case StatusOutForDelivery:
		e.Location, e.Description = to.City, "Out for delivery"
	case StatusDelivered:
		e.Location, e.Description = to.City, "Delivered"
	}
	return e
}
