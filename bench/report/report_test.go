package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fixture is a fixed run with one section of every kind of content.
func fixture() (Meta, []Section) {
	meta := Meta{
		Command:   "vitrine bench -short reads",
		Started:   time.Date(2025, 3, 1, 12, 0, 0, 0, time.FixedZone("CET", 3600)),
		Elapsed:   95 * time.Second,
		Machine:   "2 × Example CPU, 8 GiB",
		GoVersion: "go1.26.0",
		Pinning:   "servers pinned to CPUs [0], load generator to CPUs [1] (of 2)",
		Short:     true,
		Notes:     []string{"Other CPU during the run: 3%."},
	}
	latency := Plot{File: "reads-latency.svg", Title: "Product pages, open loop", Kind: KindPercentiles,
		XLabel: "percentile", YLabel: "latency (ms)", Series: []Series{
			{Name: "edge", Points: []Point{{X: 0, Y: 0.08}, {X: 50, Y: 0.1}, {X: 90, Y: 0.15}, {X: 99, Y: 0.4}, {X: 99.9, Y: 1.2}, {X: 100, Y: 2.5}}},
			{Name: "nginx", Points: []Point{{X: 0, Y: 0.1}, {X: 50, Y: 0.14}, {X: 90, Y: 0.2}, {X: 99, Y: 0.6}, {X: 99.9, Y: 1.9}, {X: 100, Y: 3.1}}},
		}}
	throughput := Plot{File: "baselines-throughput.svg", Title: "Peak throughput <hits>", Kind: KindBars,
		XLabel: "server", YLabel: "requests/s", Series: []Series{{Name: "req/s", Points: []Point{
			{Label: "fixed", Y: 120000}, {Label: "edge", Y: 110000}, {Label: "nginx", Y: 80000}, {Label: "varnish", Y: 45000}}}}}
	return meta, []Section{
		{Name: "reads", Summary: []string{"Edge read mix at 10k products: **95,000 req/s** closed loop.", "", "- p99 ≤ 2 ms at 20k req/s: **met** (0.4 ms)"},
			Tables: []Table{{Title: "Open loop", Header: []string{"rate", "p50", "p99", "errors"}, Rows: [][]string{{"10000", "0.1", "0.4", "0"}, {"20000", "0.12", "0.9", "0|1"}}}},
			Plots:  []Plot{latency}, Data: map[string]any{"peak": 95000.0, "rates": []int{10000, 20000}}},
		{Name: "baselines", Summary: []string{"Edge / fixed: **0.92×**"}, Plots: []Plot{throughput}},
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run with -update after checking):\n%s", name, got)
	}
}

func TestWriteGolden(t *testing.T) {
	meta, sections := fixture()
	dir := t.TempDir()
	if err := Write(dir, meta, sections); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"summary.md", "reads-latency.svg", "baselines-throughput.svg"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		golden(t, f+".golden", b)
	}
	// results.json: valid, with the meta and each section's data under its name.
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Meta      Meta
		Scenarios map[string]struct {
			Summary []string
			Plots   []string
			Data    map[string]any
		}
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Meta.Command != meta.Command || !got.Meta.Started.Equal(meta.Started) || got.Meta.Started.Location() != time.UTC {
		t.Errorf("meta %+v", got.Meta)
	}
	if r := got.Scenarios["reads"]; r.Data["peak"] != 95000.0 || len(r.Plots) != 1 || len(r.Summary) != 3 {
		t.Errorf("reads section %+v", r)
	}
	if _, ok := got.Scenarios["baselines"]; !ok {
		t.Error("baselines section missing")
	}
	// The same input gives the same bytes.
	dir2 := t.TempDir()
	if err := Write(dir2, meta, sections); err != nil {
		t.Fatal(err)
	}
	b2, _ := os.ReadFile(filepath.Join(dir2, "results.json"))
	if !bytes.Equal(b, b2) {
		t.Error("results.json is not deterministic")
	}
}

func TestWriteRefuses(t *testing.T) {
	pt := []Series{{Name: "s", Points: []Point{{X: 1, Y: 1}}}}
	cases := []struct {
		name     string
		sections []Section
		want     string
	}{
		{"path as file", []Section{{Name: "a", Plots: []Plot{{File: "../x.svg", Kind: KindSeries, Series: pt}}}}, "plain name"},
		{"not svg", []Section{{Name: "a", Plots: []Plot{{File: "x.png", Kind: KindSeries, Series: pt}}}}, "plain name"},
		{"same file twice", []Section{{Name: "a", Plots: []Plot{{File: "x.svg", Kind: KindSeries, Series: pt}}}, {Name: "b", Plots: []Plot{{File: "x.svg", Kind: KindSeries, Series: pt}}}}, "twice"},
		{"unknown kind", []Section{{Name: "a", Plots: []Plot{{File: "x.svg", Kind: "pie", Series: pt}}}}, "unknown kind"},
		{"no points", []Section{{Name: "a", Plots: []Plot{{File: "x.svg", Kind: KindSeries}}}}, "no points"},
		{"NaN", []Section{{Name: "a", Plots: []Plot{{File: "x.svg", Kind: KindCDF, Series: []Series{{Name: "s", Points: []Point{{X: math.NaN(), Y: 1}}}}}}}}, "finite"},
		{"negative bar", []Section{{Name: "a", Plots: []Plot{{File: "x.svg", Kind: KindBars, Series: []Series{{Name: "s", Points: []Point{{Label: "a", Y: -1}}}}}}}}, "non-negative"},
		{"section twice", []Section{{Name: "a"}, {Name: "a"}}, "twice"},
		{"data not marshallable", []Section{{Name: "a", Data: func() {}}}, "results.json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Write(t.TempDir(), Meta{}, c.sections)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err %v, want one mentioning %q", err, c.want)
			}
		})
	}
}

func TestSVGKinds(t *testing.T) {
	// Every kind renders a well-formed document whose polylines or bars stay inside the canvas,
	// including degenerate ranges (one point, all zeros).
	for _, kind := range []string{KindPercentiles, KindCDF, KindSeries, KindBars} {
		for _, pts := range [][]Point{{{X: 50, Y: 0, Label: "a"}}, {{X: 0, Y: 0, Label: "a"}, {X: 99.99, Y: 1e6, Label: "b"}}} {
			b, err := SVG(Plot{File: "x.svg", Kind: kind, Series: []Series{{Name: "s", Points: pts}}})
			if err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			s := string(b)
			if !strings.HasPrefix(s, "<svg ") || !strings.HasSuffix(s, "</svg>\n") || strings.Contains(s, "NaN") || strings.Contains(s, "Inf") {
				t.Errorf("%s %v: malformed:\n%s", kind, pts, s)
			}
		}
	}
}
