package load

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// within reports whether got is within rel (relative) of want.
func within(got, want time.Duration, rel float64) bool {
	return math.Abs(float64(got-want)) <= rel*float64(want)
}

func TestHistogramQuantiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		name   string
		n      int
		sample func(i int) time.Duration
		// want returns the exact quantile of the distribution.
		want func(q float64) time.Duration
	}{
		{"uniform 1µs..10ms in steps", 10000,
			func(i int) time.Duration { return time.Duration(i+1) * time.Microsecond },
			func(q float64) time.Duration { return time.Duration(math.Ceil(q*10000)) * time.Microsecond }},
		{"exponential mean 1ms", 200000,
			func(int) time.Duration { return time.Duration(rng.ExpFloat64() * float64(time.Millisecond)) },
			func(q float64) time.Duration { return time.Duration(-math.Log(1-q) * float64(time.Millisecond)) }},
		{"constant 3ms", 1000,
			func(int) time.Duration { return 3 * time.Millisecond },
			func(float64) time.Duration { return 3 * time.Millisecond }},
		{"bimodal 100µs / 50ms (1%)", 100000,
			func(i int) time.Duration {
				if i%100 == 0 {
					return 50 * time.Millisecond
				}
				return 100 * time.Microsecond
			},
			func(q float64) time.Duration {
				if q > 0.99 {
					return 50 * time.Millisecond
				}
				return 100 * time.Microsecond
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := NewHistogram()
			for i := 0; i < c.n; i++ {
				h.Record(c.sample(i))
			}
			if h.Count() != int64(c.n) {
				t.Fatalf("count %d, want %d", h.Count(), c.n)
			}
			// Three significant digits, plus sampling noise of the random distributions.
			for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
				got, want := h.ValueAtQuantile(q), c.want(q)
				if !within(got, want, 0.03) {
					t.Errorf("q%v: got %v, want %v", q, got, want)
				}
			}
			s := h.Summary()
			if s.Count != int64(c.n) || s.P50 > s.P90 || s.P90 > s.P99 || s.P99 > s.P999 || s.P999 > s.Max {
				t.Errorf("summary not ordered: %+v", s)
			}
		})
	}
}

func TestHistogramMerge(t *testing.T) {
	whole, a, b := NewHistogram(), NewHistogram(), NewHistogram()
	for i := 1; i <= 5000; i++ {
		d := time.Duration(i) * 7 * time.Microsecond
		whole.Record(d)
		if i%3 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
	}
	a.Merge(b)
	if a.Count() != whole.Count() || a.Max() != whole.Max() || a.Min() != whole.Min() {
		t.Fatalf("merged count/min/max %d/%v/%v, want %d/%v/%v", a.Count(), a.Min(), a.Max(), whole.Count(), whole.Min(), whole.Max())
	}
	for _, q := range []float64{0, 0.25, 0.5, 0.9, 0.99, 0.999, 1} {
		if got, want := a.ValueAtQuantile(q), whole.ValueAtQuantile(q); got != want {
			t.Errorf("q%v: merged %v, whole %v", q, got, want)
		}
	}
	// Merging an empty histogram changes nothing; merging into an empty one copies.
	empty := NewHistogram()
	a.Merge(empty)
	empty.Merge(whole)
	if a.Count() != whole.Count() || empty.ValueAtQuantile(0.99) != whole.ValueAtQuantile(0.99) {
		t.Errorf("merge with empty: counts %d/%d", a.Count(), empty.Count())
	}
}

func TestHistogramEdges(t *testing.T) {
	h := NewHistogram()
	if h.Count() != 0 || h.Max() != 0 || h.ValueAtQuantile(0.99) != 0 || h.Percentiles() != nil {
		t.Fatal("empty histogram must report zeros")
	}
	h.Record(-time.Second) // clamped to 0
	h.Record(0)
	h.Record(10 * time.Hour) // clamped to 60s
	if h.Count() != 3 {
		t.Fatalf("count %d, want 3", h.Count())
	}
	if h.Min() != 0 || !within(h.Max(), time.Minute, 0.001) {
		t.Errorf("min %v max %v, want 0 and 60s", h.Min(), h.Max())
	}
}

func TestHistogramPercentiles(t *testing.T) {
	h := NewHistogram()
	for i := 1; i <= 100000; i++ {
		h.Record(time.Duration(i) * time.Microsecond)
	}
	ps := h.Percentiles()
	if len(ps) < 10 {
		t.Fatalf("%d points, want a curve", len(ps))
	}
	for i := 1; i < len(ps); i++ {
		if ps[i].Percent < ps[i-1].Percent || ps[i].Value < ps[i-1].Value {
			t.Fatalf("curve not monotonic at %d: %+v then %+v", i, ps[i-1], ps[i])
		}
	}
	last := ps[len(ps)-1]
	if last.Percent != 100 || last.Value != h.Max() {
		t.Errorf("curve ends at %+v, want 100%% at the max %v", last, h.Max())
	}
	if p := ps[len(ps)/2]; !within(p.Value, time.Duration(p.Percent*1000)*time.Microsecond, 0.02) {
		t.Errorf("mid point %+v does not match the uniform distribution", p)
	}
}
