package report

import (
	"time"
)

// Meta describes the run as a whole: it heads summary.md and results.json.
type Meta struct {
	// Command is the command line that produced the run, e.g. "vitrine bench -short all".
	Command string `json:"command"`
	// Started is when the run began (UTC in the output).
	Started time.Time `json:"started"`
	// Elapsed is the wall time of the whole run.
	Elapsed time.Duration `json:"elapsed_ns"`
	// Machine describes the hardware in words: CPU model, core count, memory.
	Machine string `json:"machine"`
	// GoVersion is the Go toolchain the binary was built with.
	GoVersion string `json:"go_version"`
	// Revision is the source revision (git commit) of the binary, when known.
	Revision string `json:"revision,omitempty"`
	// Pinning says which CPUs the servers and the load generator were pinned to.
	Pinning string `json:"pinning"`
	// Short is true for the short version of the suite.
	Short bool `json:"short"`
	// Notes are extra Markdown lines under the heading (e.g. other load on the machine).
	Notes []string `json:"notes,omitempty"`
}

// Section is one scenario's part of the report.
type Section struct {
	// Name is the scenario name; it keys the section in results.json.
	Name string
	// Summary holds Markdown lines: headline ratios, targets against measurements (met/missed).
	Summary []string
	// Tables are rendered as Markdown tables after the summary.
	Tables []Table
	// Plots are written as SVG files and linked from summary.md.
	Plots []Plot
	// Data is the machine-readable result, marshalled into results.json under Name.
	Data any
}

// Table is a Markdown table.
type Table struct {
	Title  string     `json:"title,omitempty"`
	Header []string   `json:"header"`
	Rows   [][]string `json:"rows"`
}

// Plot kinds.
const (
	// KindPercentiles plots latency (Y) by percentile (X, in percent, e.g. 99.9), the X axis
	// log-scaled as 1/(1-p) so the tail is readable (HdrHistogram's percentile plot).
	KindPercentiles = "percentiles"
	// KindBars plots one bar per point of each series: Label names the bar, Y is its height.
	KindBars = "bars"
	// KindCDF plots a cumulative distribution: X the value, Y the fraction (0..1) at or below it.
	KindCDF = "cdf"
	// KindSeries plots Y against X as lines, both axes linear.
	KindSeries = "series"
)

// Plot is a chart written as File (an SVG) in the results folder.
type Plot struct {
	// File is the file name in the results folder, e.g. "reads-latency.svg".
	File  string
	Title string
	// Kind is one of KindPercentiles, KindBars, KindCDF, KindSeries.
	Kind           string
	XLabel, YLabel string
	Series         []Series
}

// Series is one named line (or bar group) of a plot.
type Series struct {
	Name   string
	Points []Point
}

// Point is one value of a series; Label names it in bar charts.
type Point struct {
	X, Y  float64
	Label string
}
