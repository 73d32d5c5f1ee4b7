package carrier_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"

	"vitrine/origin/carrier"
	"vitrine/schema"
)

func TestTrackingNumbers(t *testing.T) {
	tests := []struct {
		serial uint64
		want   string
	}{
		{47312482, "VT473124829US"}, // UPU S10's own example serial: check digit 9
		{0, "VT000000005US"},        // sum 0: 11 - 0 = 11 → 5
		{99999999, "VT999999995US"},
	}
	for _, tt := range tests {
		if got := carrier.TrackingNumber(tt.serial); got != tt.want || !carrier.ValidTrackingNumber(got) {
			t.Errorf("serial %d: %s, want %s", tt.serial, got, tt.want)
		}
	}
	for _, bad := range []string{"VT473124828US", "VT47312482US", "XX473124829US", "VT4731248a9US", ""} {
		if carrier.ValidTrackingNumber(bad) {
			t.Errorf("%q passed the check", bad)
		}
	}
}

func TestRatesAndLabels(t *testing.T) {
	c := &carrier.Sim{Secret: []byte("0123456789abcdef0123456789abcdef")}
	ctx := context.Background()
	near := schema.Address{Name: "Ann", Line1: "1 Main St", City: "Boston", PostalCode: "02110", Country: "US"}
	far := schema.Address{Name: "Bo", Line1: "2 Ocean Ave", City: "Seattle", PostalCode: "98101", Country: "US"}
	abroad := schema.Address{Name: "Cy", Line1: "3 Rue", City: "Paris", PostalCode: "75001", Country: "FR"}
	rate := func(grams int64, to schema.Address, svc string) carrier.Rate {
		r, err := c.Rate(ctx, carrier.Parcel{WeightGrams: grams, To: to, Service: svc})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if a, b := rate(500, near, ""), rate(5000, near, ""); a.Amount >= b.Amount {
		t.Errorf("heavier is not dearer: %d vs %d", a.Amount, b.Amount)
	}
	if a, b, x := rate(500, near, ""), rate(500, far, ""), rate(500, abroad, ""); !(a.Zone < b.Zone && b.Zone < x.Zone && a.Amount < b.Amount && b.Amount < x.Amount) {
		t.Errorf("zones %d %d %d cost %d %d %d", a.Zone, b.Zone, x.Zone, a.Amount, b.Amount, x.Amount)
	}
	if g, e := rate(500, far, "ground"), rate(500, far, "express"); e.Amount <= g.Amount || e.Days >= g.Days {
		t.Errorf("express %+v vs ground %+v", e, g)
	}
	for _, p := range []carrier.Parcel{{WeightGrams: 0, To: near}, {WeightGrams: 80_000, To: near}, {WeightGrams: 10, To: near, Service: "teleport"}} {
		if _, err := c.Rate(ctx, p); schema.ErrorCode(err) != schema.CodeInvalid {
			t.Errorf("%+v: %v", p, err)
		}
	}

	req := carrier.LabelRequest{TenantID: "t1", Key: "purchase-1/0", Parcel: carrier.Parcel{WeightGrams: 1200, To: far}, From: "Corner Shop", Reference: "7KQF-3M9X-A2BD-HX4P"}
	a, err := c.Buy(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := c.Buy(ctx, req)
	req.Key = "purchase-1/1"
	other, _ := c.Buy(ctx, req)
	if a.TrackingNumber != b.TrackingNumber || a.Rate != b.Rate || !carrier.ValidTrackingNumber(a.TrackingNumber) {
		t.Fatalf("a repeated key bought another label: %s %s", a.TrackingNumber, b.TrackingNumber)
	}
	if other.TrackingNumber == a.TrackingNumber {
		t.Fatal("two keys, one tracking number")
	}
	pctx, err := api.ReadContext(bytes.NewReader(a.PDF), model.NewDefaultConfiguration())
	if err != nil {
		t.Fatal(err)
	}
	if err := api.ValidateContext(pctx); err != nil {
		t.Fatal(err)
	}
	dims, err := pctx.PageDims()
	if err != nil || len(dims) != 1 || int(dims[0].Width+0.5) != 288 || int(dims[0].Height+0.5) != 432 {
		t.Fatalf("label pages %v (%v), want one 4×6 in page (288×432 pt)", dims, err)
	}
}

func TestTimelineMovesForward(t *testing.T) {
	s := carrier.StatusLabelCreated
	var seen []string
	for s != "" {
		seen = append(seen, s)
		s = carrier.Next(s)
	}
	if len(seen) != 4 || seen[3] != carrier.StatusDelivered || carrier.Next("nonsense") != "" {
		t.Fatalf("timeline %v", seen)
	}
}
