package store_test

import (
	"testing"
	"time"

	"vitrine/origin/store"
	"vitrine/schema"
)

func TestSubscriptionPeriods(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		interval string
		count, k int
		anchor   string
		want     string
	}{
		{"day", 1, 1, "2024-02-28T10:00:00Z", "2024-02-29T10:00:00Z"},
		{"day", 3, 2, "2024-02-28T10:00:00Z", "2024-03-05T10:00:00Z"},
		{"week", 2, 1, "2024-12-25T00:00:00Z", "2025-01-08T00:00:00Z"},
		// Months keep the anchor's day, or the month's last day when it has fewer, without
		// drifting: the anchor decides every period, not the period before.
		{"month", 1, 1, "2024-01-31T08:30:00Z", "2024-02-29T08:30:00Z"},
		{"month", 1, 2, "2024-01-31T08:30:00Z", "2024-03-31T08:30:00Z"},
		{"month", 1, 3, "2023-01-31T08:30:00Z", "2023-04-30T08:30:00Z"},
		{"month", 12, 1, "2023-05-15T00:00:00Z", "2024-05-15T00:00:00Z"},
		{"month", 5, 3, "2024-01-30T00:00:00Z", "2025-04-30T00:00:00Z"},
		{"year", 1, 1, "2024-02-29T12:00:00Z", "2025-02-28T12:00:00Z"},
		{"year", 1, 4, "2024-02-29T12:00:00Z", "2028-02-29T12:00:00Z"},
		{"day", 1, 0, "2024-02-29T12:00:00Z", "2024-02-29T12:00:00Z"},
	} {
		p := store.SubscriptionPlan{Interval: tc.interval, IntervalCount: tc.count}
		if got := p.PeriodStart(at(tc.anchor), tc.k); !got.Equal(at(tc.want)) {
			t.Errorf("%d %s × %d from %s: %s, want %s", tc.count, tc.interval, tc.k, tc.anchor, got.Format(time.RFC3339), tc.want)
		}
	}
}

func TestSubscriptionPlanValidation(t *testing.T) {
	n := func(v int) *int { return &v }
	for _, tc := range []struct {
		plan  store.SubscriptionPlan
		field string
	}{
		{store.SubscriptionPlan{Interval: "month", IntervalCount: 1}, ""},
		{store.SubscriptionPlan{Interval: "year", IntervalCount: 12, Count: n(1000)}, ""},
		{store.SubscriptionPlan{Interval: "hour", IntervalCount: 1}, "interval"},
		{store.SubscriptionPlan{Interval: "", IntervalCount: 1}, "interval"},
		{store.SubscriptionPlan{Interval: "day", IntervalCount: 0}, "interval_count"},
		{store.SubscriptionPlan{Interval: "day", IntervalCount: 13}, "interval_count"},
		{store.SubscriptionPlan{Interval: "day", IntervalCount: 1, Count: n(0)}, "count"},
		{store.SubscriptionPlan{Interval: "day", IntervalCount: 1, Count: n(1001)}, "count"},
	} {
		err := tc.plan.Validate()
		field := ""
		if err != nil {
			field = schema.AsError(err).Field
		}
		if field != tc.field {
			t.Errorf("%+v: error %v, want one on %q", tc.plan, err, tc.field)
		}
	}
}
