package shopify

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
)

// Report is what an import did. Import returns one even when it stops on an error: it then
// counts what was committed before the error.
type Report struct {
	// Currency and Exponent are the tenant's default currency, in which prices were read.
	Currency string
	Exponent int
	// Rows counts the data rows read (blank rows excluded).
	Rows int
	// Products counts the products of the file written or found equal, by outcome.
	ProductsCreated, ProductsUpdated, ProductsUnchanged int
	// Variants counts their variants, by outcome.
	VariantsCreated, VariantsUpdated, VariantsUnchanged int
	// Images counts the images the imported products have from the file.
	Images int
	// CategoriesCreated counts the categories the import created (existing ones are reused).
	CategoriesCreated int
	// Transactions counts the write transactions committed.
	Transactions int
	// RejectedProducts counts the products (groups of rows) rejected; Rejects lists every
	// rejected row, in line order.
	RejectedProducts int
	Rejects          []Reject
	// Warnings lists what was imported with a change (a negative stock set to 0, images
	// dropped, a category skipped), in line order within each transaction.
	Warnings []Warning
}

// Products is the number of products of the file imported, whatever their outcome.
func (r *Report) Products() int { return r.ProductsCreated + r.ProductsUpdated + r.ProductsUnchanged }

// Reject is one rejected row.
type Reject struct {
	// Line is the line of the file the row starts on (the header is line 1; a quoted field may
	// span lines).
	Line int
	// Handle is the row's handle, "" when it has none or could not be read.
	Handle string
	Reason string
}

// Warning is a row imported with a change the merchant should know of. Line 0 is about the
// whole file.
type Warning struct {
	Line    int
	Handle  string
	Message string
}

// Progress is the state of an import, reported after each batch (Options.Progress).
type Progress struct {
	// Bytes is how much of the input has been read.
	Bytes int64
	// Rows counts the rows read; Products the products imported so far; Rejected the rows
	// rejected so far.
	Rows, Products, Rejected int
}

// rejected is a reject with its row's fields, for the rejects file.
type rejected struct {
	Reject
	rec []string
}

// rejectsWriter writes rejected rows as CSV: "Line" and "Reason", then the file's own columns,
// so that the file can be corrected and imported again (the importer ignores the two extra
// columns).
type rejectsWriter struct {
	w      *csv.Writer
	header []string
	wrote  bool
}

func newRejectsWriter(w io.Writer, header []string) *rejectsWriter {
	return &rejectsWriter{w: csv.NewWriter(w), header: header}
}

// write writes rejects, sorted by line, after the header on the first call.
func (rw *rejectsWriter) write(rs []rejected) error {
	if !rw.wrote {
		rw.wrote = true
		if err := rw.w.Write(append([]string{"Line", "Reason"}, rw.header...)); err != nil {
			return err
		}
	}
	for _, r := range rs {
		rec := make([]string, 0, 2+len(rw.header))
		rec = append(rec, strconv.Itoa(r.Line), r.Reason)
		rec = append(rec, r.rec...)
		for len(rec) < 2+len(rw.header) {
			rec = append(rec, "")
		}
		if err := rw.w.Write(rec); err != nil {
			return err
		}
	}
	rw.w.Flush()
	if err := rw.w.Error(); err != nil {
		return fmt.Errorf("shopify: write rejects: %w", err)
	}
	return nil
}

// sortRejects orders rejects by line (stable, so that a row's order in its group is kept).
func sortRejects(rs []rejected) {
	slices.SortStableFunc(rs, func(a, b rejected) int { return a.Line - b.Line })
}
