package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Write writes summary.md, results.json and one SVG per plot of sections into dir, creating dir
// if needed. It refuses plot file names that are not plain file names or that repeat.
func Write(dir string, meta Meta, sections []Section) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, s := range sections {
		for _, p := range s.Plots {
			if p.File == "" || p.File != filepath.Base(p.File) || !strings.HasSuffix(p.File, ".svg") {
				return fmt.Errorf("report: plot %q of %s: file must be a plain name ending in .svg", p.File, s.Name)
			}
			if seen[p.File] {
				return fmt.Errorf("report: plot file %q appears twice", p.File)
			}
			seen[p.File] = true
			svg, err := SVG(p)
			if err != nil {
				return fmt.Errorf("report: plot %s: %w", p.File, err)
			}
			if err := os.WriteFile(filepath.Join(dir, p.File), svg, 0o644); err != nil {
				return err
			}
		}
	}
	js, err := JSON(meta, sections)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), js, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "summary.md"), Markdown(meta, sections), 0o644)
}

// Markdown renders summary.md: the run's heading and, per section, its summary lines, tables and
// links to its plots.
func Markdown(meta Meta, sections []Section) []byte {
	var b bytes.Buffer
	b.WriteString("# Vitrine bench results\n\n")
	if meta.Command != "" {
		fmt.Fprintf(&b, "Command: `%s`\n\n", meta.Command)
	}
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "- %s: %s\n", k, v)
		}
	}
	if !meta.Started.IsZero() {
		row("Started", meta.Started.UTC().Format(time.RFC3339))
	}
	if meta.Elapsed > 0 {
		row("Elapsed", meta.Elapsed.Round(time.Second).String())
	}
	row("Machine", meta.Machine)
	row("Go", meta.GoVersion)
	row("Revision", meta.Revision)
	row("Pinning", meta.Pinning)
	if meta.Short {
		row("Version", "short (`-short`): fewer requests and sizes; the full run is the reference")
	}
	for _, n := range meta.Notes {
		fmt.Fprintf(&b, "- %s\n", n)
	}
	for _, s := range sections {
		fmt.Fprintf(&b, "\n## %s\n\n", s.Name)
		for _, l := range s.Summary {
			b.WriteString(l)
			b.WriteByte('\n')
		}
		for _, t := range s.Tables {
			b.WriteByte('\n')
			if t.Title != "" {
				fmt.Fprintf(&b, "### %s\n\n", t.Title)
			}
			writeTable(&b, t)
		}
		if len(s.Plots) > 0 {
			b.WriteByte('\n')
			for _, p := range s.Plots {
				fmt.Fprintf(&b, "![%s](%s)\n", escapeMarkdown(p.Title), p.File)
			}
		}
	}
	return b.Bytes()
}

func writeTable(b *bytes.Buffer, t Table) {
	cells := func(row []string) {
		b.WriteString("|")
		for i := range t.Header {
			c := ""
			if i < len(row) {
				c = row[i]
			}
			fmt.Fprintf(b, " %s |", strings.ReplaceAll(c, "|", `\|`))
		}
		b.WriteByte('\n')
	}
	cells(t.Header)
	b.WriteString("|")
	for range t.Header {
		b.WriteString(" --- |")
	}
	b.WriteByte('\n')
	for _, r := range t.Rows {
		cells(r)
	}
}

func escapeMarkdown(s string) string {
	return strings.NewReplacer("[", `\[`, "]", `\]`).Replace(s)
}

// JSON renders results.json: {"meta": …, "scenarios": {name: {summary, tables, data}}} with the
// scenarios in a stable (sorted) order.
func JSON(meta Meta, sections []Section) ([]byte, error) {
	type section struct {
		Summary []string `json:"summary"`
		Tables  []Table  `json:"tables,omitempty"`
		Plots   []string `json:"plots,omitempty"`
		Data    any      `json:"data,omitempty"`
	}
	out := struct {
		Meta      Meta               `json:"meta"`
		Scenarios map[string]section `json:"scenarios"`
	}{Meta: meta, Scenarios: map[string]section{}}
	out.Meta.Started = out.Meta.Started.UTC()
	for _, s := range sections {
		sec := section{Summary: s.Summary, Tables: s.Tables, Data: s.Data}
		if sec.Summary == nil {
			sec.Summary = []string{}
		}
		for _, p := range s.Plots {
			sec.Plots = append(sec.Plots, p.File)
		}
		if _, dup := out.Scenarios[s.Name]; dup {
			return nil, fmt.Errorf("report: section %q appears twice", s.Name)
		}
		out.Scenarios[s.Name] = sec
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("report: results.json: %w", err)
	}
	return append(b, '\n'), nil
}
