package store_test

import (
	"testing"

	"vitrine/origin/store"
	"vitrine/schema"
)

func TestReturnStateMachine(t *testing.T) {
	allowed := map[[2]string]bool{
		{"submitted", "approved"}: true, {"submitted", "declined"}: true,
		{"approved", "received"}: true, {"received", "refunded"}: true,
	}
	for _, from := range store.ReturnStatuses {
		for _, to := range append(store.ReturnStatuses, "shipped", "") {
			if got := store.ReturnCanMove(from, to); got != allowed[[2]string{from, to}] {
				t.Errorf("ReturnCanMove(%q, %q) = %v", from, to, got)
			}
		}
	}
}

func TestRefundableNeverExceedsWhatWasPaid(t *testing.T) {
	// 3 units for 1000 in all (after discounts): 333.33 each.
	lines := []store.OrderLine{{LineNo: 1, Quantity: 3, Total: 1000}, {LineNo: 2, Quantity: 1, Total: 999_999_999_999_999}}
	ret := func(q ...int64) *store.Return {
		r := &store.Return{}
		for i, n := range q {
			if n > 0 {
				r.Lines = append(r.Lines, store.ReturnLine{LineNo: i + 1, Quantity: n})
			}
		}
		return r
	}
	for _, tc := range []struct {
		r    *store.Return
		want int64
	}{
		{ret(1), 333}, {ret(2), 666}, {ret(3), 1000}, {ret(0, 1), 999_999_999_999_999}, {ret(3, 1), 1_000_000_000_000_999},
		{&store.Return{Lines: []store.ReturnLine{{LineNo: 9, Quantity: 1}}}, 0},
	} {
		if got := store.Refundable(lines, tc.r); got != tc.want {
			t.Errorf("Refundable(%+v) = %d, want %d", tc.r.Lines, got, tc.want)
		}
	}
	// Three returns of one unit each refund at most the line's total.
	if sum := 3 * store.Refundable(lines, ret(1)); sum > 1000 {
		t.Errorf("one unit at a time refunds %d of 1000", sum)
	}
}

func TestReturnableSkipsDeclinedReturns(t *testing.T) {
	lines := []store.OrderLine{{LineNo: 1, Quantity: 3}, {LineNo: 2, Quantity: 1}}
	returns := []*store.Return{
		{Status: store.ReturnDeclined, Lines: []store.ReturnLine{{LineNo: 1, Quantity: 3}}},
		{Status: store.ReturnSubmitted, Lines: []store.ReturnLine{{LineNo: 1, Quantity: 1}}},
		{Status: store.ReturnRefunded, Lines: []store.ReturnLine{{LineNo: 2, Quantity: 1}}},
	}
	got := store.Returnable(lines, returns)
	if got[1] != 2 || got[2] != 0 {
		t.Fatalf("Returnable = %v, want line 1: 2, line 2: 0", got)
	}
}

func TestReturnReferences(t *testing.T) {
	rma := store.NewRMA()
	for _, typed := range []string{rma, "rma-" + rma[4:], "RMA-" + rma[4:8] + rma[9:]} {
		if got, ok := store.NormalizeRMA(typed); !ok || got != rma {
			t.Errorf("NormalizeRMA(%q) = %q, %v; want %q", typed, got, ok, rma)
		}
	}
	for _, bad := range []string{"", "RMA", "RMA-", rma[4:], "RMA-UUUU-0000-0000-0000", "00000000-0000-4000-8000-000000000000"} {
		if _, ok := store.NormalizeRMA(bad); ok {
			t.Errorf("NormalizeRMA(%q) accepted", bad)
		}
	}
	for s, want := range map[string]bool{
		store.NewUUID(): true, "00000000-0000-4000-8000-00000000000A": true,
		"00000000-0000-4000-8000-00000000000": false, "00000000x0000-4000-8000-000000000000": false,
		"0000000g-0000-4000-8000-000000000000": false, "": false, "'; DROP TABLE returns; --": false,
	} {
		if got := schema.ValidUUID(s); got != want {
			t.Errorf("ValidUUID(%q) = %v, want %v", s, got, want)
		}
	}
}
