package main

import "testing"

func TestFleetLinkValues(t *testing.T) {
	for _, tc := range []struct {
		in   string
		loss float64
		ok   bool
	}{
		{"10%", 0.1, true},
		{"0.1", 0.1, true},
		{"0", 0, true},
		{"100%", 1, true},
		{"150%", 0, false},
		{"-1%", 0, false},
		{"much", 0, false},
	} {
		got, err := parseLoss(tc.in)
		if (err == nil) != tc.ok || (tc.ok && (got < tc.loss-1e-9 || got > tc.loss+1e-9)) {
			t.Errorf("parseLoss(%q) = %v, %v; want %v (ok %v)", tc.in, got, err, tc.loss, tc.ok)
		}
	}
	for _, tc := range []struct {
		in   string
		rate int64
		ok   bool
	}{
		{"100mbit", 100e6, true},
		{"1gbit", 1e9, true},
		{"1.5mbit", 1.5e6, true},
		{"64000", 64000, true},
		{"0", 0, true},
		{"fast", 0, false},
		{"-1mbit", 0, false},
	} {
		got, err := parseRate(tc.in)
		if (err == nil) != tc.ok || got != tc.rate {
			t.Errorf("parseRate(%q) = %v, %v; want %v (ok %v)", tc.in, got, err, tc.rate, tc.ok)
		}
	}
}
