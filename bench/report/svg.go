package report

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"strconv"
)

// Geometry of every plot, in SVG user units.
const (
	svgWidth   = 760
	svgHeight  = 440
	plotLeft   = 80
	plotRight  = 560 // the legend sits right of it
	plotTop    = 50
	plotBottom = 380
)

// palette colours the series in order (colour-blind safe, Okabe–Ito).
var palette = [...]string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"}

// SVG renders one plot. It fails on an unknown kind or a plot without points.
func SVG(p Plot) ([]byte, error) {
	n := 0
	for _, s := range p.Series {
		n += len(s.Points)
	}
	if n == 0 {
		return nil, fmt.Errorf("no points")
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", svgWidth, svgHeight, svgWidth, svgHeight)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", svgWidth, svgHeight)
	fmt.Fprintf(&b, `<text x="%d" y="24" font-size="16" font-weight="bold">%s</text>`+"\n", plotLeft, html.EscapeString(p.Title))
	var err error
	switch p.Kind {
	case KindPercentiles, KindCDF, KindSeries:
		err = lines(&b, p)
	case KindBars:
		err = bars(&b, p)
	default:
		err = fmt.Errorf("unknown kind %q", p.Kind)
	}
	if err != nil {
		return nil, err
	}
	// Axis labels and legend.
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">%s</text>`+"\n", (plotLeft+plotRight)/2, svgHeight-16, html.EscapeString(p.XLabel))
	fmt.Fprintf(&b, `<text transform="translate(18 %d) rotate(-90)" text-anchor="middle">%s</text>`+"\n", (plotTop+plotBottom)/2, html.EscapeString(p.YLabel))
	for i, s := range p.Series {
		y := plotTop + 10 + 20*i
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="14" height="10" fill="%s"/>`+"\n", plotRight+20, y-9, colour(i))
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", plotRight+40, y, html.EscapeString(s.Name))
	}
	b.WriteString("</svg>\n")
	return b.Bytes(), nil
}

func colour(i int) string { return palette[i%len(palette)] }

// axis maps data values to pixels on one axis.
type axis struct {
	min, max   float64 // data range (after the transform)
	from, to   float64 // pixel range
	transform  func(float64) float64
	ticks      []float64 // data values (before the transform)
	tickLabels []string
}

func (a axis) pos(v float64) float64 {
	t := a.transform(v)
	if a.max == a.min {
		return a.from
	}
	return a.from + (t-a.min)/(a.max-a.min)*(a.to-a.from)
}

func identity(v float64) float64 { return v }

// percentileX is the transform of the percentiles plot: 90 → 1, 99 → 2, 99.9 → 3. 100 (the
// maximum) has no finite place: percentileAxis puts it at the right edge.
func percentileX(p float64) float64 {
	return math.Log10(100 / (100 - p))
}

// percentileAxis covers the percentiles of a plot: ticks at 0, 90, 99, 99.9… up to the highest
// percentile below 100, and "max" one step further when a point is at 100%.
func percentileAxis(series []Series) axis {
	below, hasMax := 0.0, false
	for _, s := range series {
		for _, pt := range s.Points {
			if pt.X >= 100 {
				hasMax = true
			} else {
				below = math.Max(below, pt.X)
			}
		}
	}
	top := math.Max(2, math.Ceil(percentileX(below)-1e-9))
	last := top
	if hasMax {
		last++
	}
	a := axis{min: 0, max: last, from: plotLeft, to: plotRight}
	a.transform = func(p float64) float64 {
		if p >= 100 {
			return last
		}
		return percentileX(p)
	}
	for i := 0.0; i <= top; i++ {
		pc := math.Round((100-100/math.Pow(10, i))*1e6) / 1e6
		a.ticks = append(a.ticks, pc)
		a.tickLabels = append(a.tickLabels, strconv.FormatFloat(pc, 'f', -1, 64)+"%")
	}
	if hasMax {
		a.ticks = append(a.ticks, 100)
		a.tickLabels = append(a.tickLabels, "max")
	}
	return a
}

// linearAxis covers [lo, hi] with about five round ticks.
func linearAxis(lo, hi, from, to float64) axis {
	if hi <= lo {
		hi = lo + 1
	}
	step := niceStep((hi - lo) / 5)
	lo = math.Floor(lo/step) * step
	hi = math.Ceil(hi/step) * step
	a := axis{min: lo, max: hi, from: from, to: to, transform: identity}
	for v := lo; v <= hi+step/2; v += step {
		a.ticks = append(a.ticks, v)
		a.tickLabels = append(a.tickLabels, number(v))
	}
	return a
}

// niceStep rounds x up to 1, 2 or 5 times a power of ten.
func niceStep(x float64) float64 {
	if x <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

// number formats a tick or value label compactly.
func number(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// px formats a pixel coordinate with one decimal, so output is stable.
func px(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func lines(b *bytes.Buffer, p Plot) error {
	xlo, xhi := math.Inf(1), math.Inf(-1)
	ylo, yhi := 0.0, math.Inf(-1)
	for _, s := range p.Series {
		for _, pt := range s.Points {
			if math.IsNaN(pt.X) || math.IsNaN(pt.Y) || math.IsInf(pt.X, 0) || math.IsInf(pt.Y, 0) {
				return fmt.Errorf("series %q: not a finite point", s.Name)
			}
			if p.Kind == KindPercentiles && (pt.X < 0 || pt.X > 100) {
				return fmt.Errorf("series %q: percentile %v outside 0..100", s.Name, pt.X)
			}
			xlo, xhi = math.Min(xlo, pt.X), math.Max(xhi, pt.X)
			ylo, yhi = math.Min(ylo, pt.Y), math.Max(yhi, pt.Y)
		}
	}
	var x axis
	switch p.Kind {
	case KindPercentiles:
		x = percentileAxis(p.Series)
	case KindCDF:
		x = linearAxis(math.Min(0, xlo), xhi, plotLeft, plotRight)
		yhi = 1
	default:
		x = linearAxis(xlo, xhi, plotLeft, plotRight)
	}
	y := linearAxis(ylo, yhi, plotBottom, plotTop)
	frame(b, x, y)
	for i, s := range p.Series {
		fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="2" points="`, colour(i))
		for j, pt := range s.Points {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(px(x.pos(pt.X)) + "," + px(y.pos(pt.Y)))
		}
		b.WriteString(`"/>` + "\n")
	}
	return nil
}

func bars(b *bytes.Buffer, p Plot) error {
	// Categories are the labels in order of first appearance; each series is one bar per category.
	var cats []string
	index := map[string]int{}
	yhi := 0.0
	for _, s := range p.Series {
		for _, pt := range s.Points {
			if math.IsNaN(pt.Y) || math.IsInf(pt.Y, 0) || pt.Y < 0 {
				return fmt.Errorf("series %q: bar heights must be finite and non-negative", s.Name)
			}
			if _, ok := index[pt.Label]; !ok {
				index[pt.Label] = len(cats)
				cats = append(cats, pt.Label)
			}
			yhi = math.Max(yhi, pt.Y)
		}
	}
	y := linearAxis(0, yhi, plotBottom, plotTop)
	frame(b, axis{}, y)
	slot := float64(plotRight-plotLeft) / float64(len(cats))
	width := slot * 0.8 / float64(len(p.Series))
	for i, c := range cats {
		left := plotLeft + slot*float64(i) + slot*0.1
		fmt.Fprintf(b, `<text x="%s" y="%d" text-anchor="middle">%s</text>`+"\n", px(left+slot*0.4), plotBottom+18, html.EscapeString(c))
	}
	for si, s := range p.Series {
		for _, pt := range s.Points {
			left := plotLeft + slot*float64(index[pt.Label]) + slot*0.1 + width*float64(si)
			top := y.pos(pt.Y)
			fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"/>`+"\n", px(left), px(top), px(width), px(plotBottom-top), colour(si))
			fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle" font-size="10">%s</text>`+"\n", px(left+width/2), px(top-4), number(roundTo(pt.Y, 3)))
		}
	}
	return nil
}

// roundTo keeps sig significant digits of v, for value labels.
func roundTo(v float64, sig int) float64 {
	if v == 0 {
		return 0
	}
	p := math.Pow(10, float64(sig)-math.Ceil(math.Log10(math.Abs(v))))
	return math.Round(v*p) / p
}

// frame draws the plot area, grid lines and tick labels (x only when it has ticks).
func frame(b *bytes.Buffer, x, y axis) {
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#444"/>`+"\n", plotLeft, plotTop, plotRight-plotLeft, plotBottom-plotTop)
	for i, v := range y.ticks {
		py := px(y.pos(v))
		fmt.Fprintf(b, `<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#ddd"/>`+"\n", plotLeft, py, plotRight, py)
		fmt.Fprintf(b, `<text x="%d" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", plotLeft-6, py, y.tickLabels[i])
	}
	for i, v := range x.ticks {
		pxx := px(x.pos(v))
		fmt.Fprintf(b, `<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#ddd"/>`+"\n", pxx, plotTop, pxx, plotBottom)
		fmt.Fprintf(b, `<text x="%s" y="%d" text-anchor="middle">%s</text>`+"\n", pxx, plotBottom+18, x.tickLabels[i])
	}
}
