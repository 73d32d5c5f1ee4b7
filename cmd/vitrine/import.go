package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"vitrine/origin/shopify"
	"vitrine/origin/store"
)

// runImport imports a Shopify product CSV export into a tenant's catalog.
func runImport(ctx context.Context, args []string) error {
	f := newFlags("import")
	c := f.common()
	tenant := f.FlagSet.String("tenant", "", "tenant slug (required)")
	rejects := f.FlagSet.String("rejects", "", "also write the rejected rows to this CSV file: Line, Reason, then the file's columns")
	batch := f.FlagSet.Int("batch", shopify.DefaultBatchProducts, "products per transaction (a transaction also stops at 450 replicated changes)")
	f.FlagSet.Usage = func() {
		fmt.Fprintln(f.FlagSet.Output(), "Usage: vitrine import --tenant <slug> [flags] <products.csv | ->")
		f.FlagSet.PrintDefaults()
	}
	if err := f.Parse(args); err != nil {
		return err
	}
	if *tenant == "" || f.NArg() != 1 {
		f.FlagSet.Usage()
		return errors.New("import: --tenant and one CSV file (or - for standard input) are required")
	}
	path := f.Arg(0)
	in, size, err := openInput(path)
	if err != nil {
		return err
	}
	defer in.Close()

	db, err := c.openDB(ctx, false, store.Config{})
	if err != nil {
		return err
	}
	defer db.Close()
	t, err := db.TenantBySlug(ctx, *tenant)
	if err != nil {
		return fmt.Errorf("tenant %s: %w", *tenant, err)
	}
	opt := shopify.Options{BatchProducts: *batch}
	if *rejects != "" {
		rf, err := os.Create(*rejects)
		if err != nil {
			return err
		}
		defer rf.Close()
		opt.Rejects = rf
	}
	start := time.Now()
	bar := &progressBar{w: os.Stderr, size: size, tty: isTerminal(os.Stderr), start: start}
	opt.Progress = bar.update
	rep, err := shopify.Import(ctx, db, t, in, opt)
	bar.finish()
	printImportReport(os.Stdout, path, t.Slug, rep, time.Since(start), *rejects)
	if err != nil {
		return err
	}
	if len(rep.Rejects) > 0 {
		return fmt.Errorf("import: %d rows rejected (%d products)", len(rep.Rejects), rep.RejectedProducts)
	}
	return nil
}

// openInput opens the file to import ("-": standard input) and returns its size when known.
func openInput(path string) (io.ReadCloser, int64, error) {
	if path == "-" {
		return io.NopCloser(os.Stdin), 0, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	var size int64
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		size = fi.Size()
	}
	return f, size, nil
}

// isTerminal reports whether f is a character device (a terminal), without a terminal library.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0 && os.Getenv("TERM") != "dumb"
}

// progressBar shows an import's progress: a bar redrawn in place on a terminal, else a plain line
// every few seconds (logs and CI keep every line).
type progressBar struct {
	w     io.Writer
	size  int64 // 0 when unknown (standard input)
	tty   bool
	start time.Time
	last  time.Time
	drawn bool
}

func (b *progressBar) update(p shopify.Progress) {
	now := time.Now()
	if !b.tty && now.Sub(b.last) < 2*time.Second {
		return
	}
	b.last = now
	rate := float64(p.Rows) / max(now.Sub(b.start).Seconds(), 1e-3)
	stats := fmt.Sprintf("%d rows, %d products, %d rejected, %.0f rows/s", p.Rows, p.Products, p.Rejected, rate)
	pct := -1
	if b.size > 0 {
		pct = int(min(100, p.Bytes*100/b.size))
	}
	if !b.tty {
		if pct >= 0 {
			fmt.Fprintf(b.w, "import: %3d%%  %s\n", pct, stats)
		} else {
			fmt.Fprintf(b.w, "import: %s\n", stats)
		}
		return
	}
	bar := ""
	if pct >= 0 {
		const width = 30
		fill := pct * width / 100
		bar = fmt.Sprintf("[%s%s] %3d%%  ", strings.Repeat("=", fill), strings.Repeat(" ", width-fill), pct)
	}
	fmt.Fprintf(b.w, "\r%s%s\x1b[K", bar, stats)
	b.drawn = true
}

// finish ends the bar's line.
func (b *progressBar) finish() {
	if b.drawn {
		fmt.Fprintln(b.w)
	}
}

// printImportReport prints what an import did: counts, warnings and every rejected row.
func printImportReport(w io.Writer, path, tenant string, r *shopify.Report, elapsed time.Duration, rejectsPath string) {
	secs := max(elapsed.Seconds(), 1e-3)
	fmt.Fprintf(w, "import of %s into %s: %d rows in %s (%.0f rows/s), %d transactions, prices in %s (%d decimals)\n",
		path, tenant, r.Rows, elapsed.Round(time.Millisecond), float64(r.Rows)/secs, r.Transactions, r.Currency, r.Exponent)
	fmt.Fprintf(w, "  products    %d created, %d updated, %d unchanged\n", r.ProductsCreated, r.ProductsUpdated, r.ProductsUnchanged)
	fmt.Fprintf(w, "  variants    %d created, %d updated, %d unchanged\n", r.VariantsCreated, r.VariantsUpdated, r.VariantsUnchanged)
	fmt.Fprintf(w, "  images      %d\n", r.Images)
	fmt.Fprintf(w, "  categories  %d created\n", r.CategoriesCreated)
	if len(r.Warnings) > 0 {
		fmt.Fprintf(w, "  warnings    %d\n", len(r.Warnings))
		for _, x := range r.Warnings {
			fmt.Fprintf(w, "    %s%s\n", where(x.Line, x.Handle), x.Message)
		}
	}
	fmt.Fprintf(w, "  rejected    %d rows (%d products)\n", len(r.Rejects), r.RejectedProducts)
	for _, x := range r.Rejects {
		fmt.Fprintf(w, "    %s%s\n", where(x.Line, x.Handle), x.Reason)
	}
	if rejectsPath != "" {
		fmt.Fprintf(w, "  rejected rows written to %s\n", rejectsPath)
	}
}

func where(line int, handle string) string {
	switch {
	case line == 0:
		return ""
	case handle == "":
		return fmt.Sprintf("line %d: ", line)
	}
	return fmt.Sprintf("line %d (%s): ", line, handle)
}
