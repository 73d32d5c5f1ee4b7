package load

import (
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Range of a Histogram: 0 to 60 s at nanosecond units, three significant digits (0.1% error at
// any value).
const (
	histLowest  = 1
	histHighest = int64(60 * time.Second)
	histDigits  = 3
)

// Histogram is an HDR histogram of durations (0 to 60 s, three significant digits; values
// outside are clamped to the range). The zero value is not usable: call NewHistogram. It is not
// safe for concurrent use: record per worker and Merge.
type Histogram struct {
	h *hdr.Histogram
}

// NewHistogram returns an empty histogram.
func NewHistogram() *Histogram {
	return &Histogram{h: hdr.New(histLowest, histHighest, histDigits)}
}

// Record adds one duration.
func (h *Histogram) Record(d time.Duration) {
	v := int64(d)
	if v < 0 {
		v = 0
	}
	if v > histHighest {
		v = histHighest
	}
	h.h.RecordValue(v) // cannot fail: v is within the range
}

// Merge adds every value of o into h.
func (h *Histogram) Merge(o *Histogram) {
	h.h.Merge(o.h)
}

// Count is the number of recorded values.
func (h *Histogram) Count() int64 { return h.h.TotalCount() }

// Max is the largest recorded value (to the histogram's precision), 0 when empty.
func (h *Histogram) Max() time.Duration {
	if h.Count() == 0 {
		return 0
	}
	return time.Duration(h.h.Max())
}

// Min is the smallest recorded value (to the histogram's precision), 0 when empty.
func (h *Histogram) Min() time.Duration {
	if h.Count() == 0 {
		return 0
	}
	return time.Duration(h.h.Min())
}

// Mean is the mean of the recorded values, 0 when empty.
func (h *Histogram) Mean() time.Duration { return time.Duration(h.h.Mean()) }

// ValueAtQuantile returns the value at or below which a fraction q (0..1, e.g. 0.99) of the
// recorded values lie; 0 when empty.
func (h *Histogram) ValueAtQuantile(q float64) time.Duration {
	if h.Count() == 0 {
		return 0
	}
	return time.Duration(h.h.ValueAtPercentile(q * 100))
}

// Percentile is one point of a latency percentile curve.
type Percentile struct {
	Percent float64       // 0..100, e.g. 99.9
	Value   time.Duration // the value at or below which Percent of the values lie
}

// Percentiles returns the percentile curve for plotting: points spaced evenly on a 1/(1-p) scale
// (five per halving of the remaining tail), ending at 100% (the maximum).
func (h *Histogram) Percentiles() []Percentile {
	if h.Count() == 0 {
		return nil
	}
	var out []Percentile
	for _, b := range h.h.CumulativeDistributionWithTicks(5) {
		out = append(out, Percentile{Percent: b.Quantile, Value: time.Duration(b.ValueAt)})
	}
	return out
}

// Summary is the usual percentiles of a histogram, for tables and results.json (milliseconds).
type Summary struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50_ms"`
	P90   float64 `json:"p90_ms"`
	P99   float64 `json:"p99_ms"`
	P999  float64 `json:"p99_9_ms"`
	Max   float64 `json:"max_ms"`
	Mean  float64 `json:"mean_ms"`
}

// Summary returns the count, p50, p90, p99, p99.9, max and mean in milliseconds.
func (h *Histogram) Summary() Summary {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return Summary{
		Count: h.Count(),
		P50:   ms(h.ValueAtQuantile(0.50)),
		P90:   ms(h.ValueAtQuantile(0.90)),
		P99:   ms(h.ValueAtQuantile(0.99)),
		P999:  ms(h.ValueAtQuantile(0.999)),
		Max:   ms(h.Max()),
		Mean:  ms(h.Mean()),
	}
}
