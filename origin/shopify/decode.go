package shopify

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"vitrine/origin/store"
	"vitrine/schema"
)

// ErrHeader is wrapped by the error Import returns when the file's header is unusable (missing
// required columns, a column given twice): nothing was written.
var ErrHeader = errors.New("shopify: bad header")

// field is a column the importer reads.
type field int

const (
	fHandle field = iota
	fTitle
	fBody
	fCategory
	fType
	fPublished
	fStatus
	fOpt1Name
	fOpt1Value
	fOpt2Name
	fOpt2Value
	fOpt3Name
	fOpt3Value
	fSKU
	fQty
	fPrice
	fImageSrc
	fImagePosition
	fImageAlt
	fVariantImage
	numFields
)

// optionColumns returns the name and value columns of Option1..3.
func optionColumns() [3][2]field {
	return [3][2]field{{fOpt1Name, fOpt1Value}, {fOpt2Name, fOpt2Value}, {fOpt3Name, fOpt3Value}}
}

// fieldOf maps a normalised header name (lowercase, single spaces) to the field it holds. The
// second names are those of Shopify's newer export ("URL handle", "SKU", "Price"…).
func fieldOf(name string) (field, bool) {
	switch name {
	case "handle", "url handle":
		return fHandle, true
	case "title":
		return fTitle, true
	case "body (html)", "body html", "description":
		return fBody, true
	case "product category":
		return fCategory, true
	case "type", "product type":
		return fType, true
	case "published", "published on online store":
		return fPublished, true
	case "status":
		return fStatus, true
	case "option1 name":
		return fOpt1Name, true
	case "option1 value":
		return fOpt1Value, true
	case "option2 name":
		return fOpt2Name, true
	case "option2 value":
		return fOpt2Value, true
	case "option3 name":
		return fOpt3Name, true
	case "option3 value":
		return fOpt3Value, true
	case "variant sku", "sku":
		return fSKU, true
	case "variant inventory qty", "inventory quantity":
		return fQty, true
	case "variant price", "price":
		return fPrice, true
	case "image src", "product image url":
		return fImageSrc, true
	case "image position":
		return fImagePosition, true
	case "image alt text":
		return fImageAlt, true
	case "variant image", "variant image url":
		return fVariantImage, true
	}
	return 0, false
}

// columnName is the name a field is reported by.
func columnName(f field) string {
	return [...]string{"Handle", "Title", "Body (HTML)", "Product Category", "Type", "Published", "Status",
		"Option1 Name", "Option1 Value", "Option2 Name", "Option2 Value", "Option3 Name", "Option3 Value",
		"Variant SKU", "Variant Inventory Qty", "Variant Price", "Image Src", "Image Position", "Image Alt Text",
		"Variant Image"}[f]
}

// header maps fields to column indexes (-1 when absent).
type header struct {
	idx   [numFields]int
	names []string // the file's header, as read (for the rejects file)
}

func (h *header) has(f field) bool { return h.idx[f] >= 0 }

// parseHeader reads the header record. It fails, naming every problem, when a required column
// is missing, a known column appears twice, or an option has a name column without a value
// column (or the reverse).
func parseHeader(rec []string) (*header, error) {
	h := &header{names: slices.Clone(rec)}
	for i := range h.idx {
		h.idx[i] = -1
	}
	var problems []string
	for i, name := range rec {
		if i == 0 {
			name = strings.TrimPrefix(name, "\uFEFF")
		}
		f, ok := fieldOf(strings.ToLower(strings.Join(strings.Fields(name), " ")))
		if !ok {
			continue
		}
		if h.idx[f] >= 0 {
			problems = append(problems, fmt.Sprintf("column %s appears twice (columns %d and %d)", columnName(f), h.idx[f]+1, i+1))
			continue
		}
		h.idx[f] = i
	}
	var missing []string
	for _, f := range []field{fHandle, fTitle, fPrice} {
		if !h.has(f) {
			missing = append(missing, columnName(f))
		}
	}
	if len(missing) > 0 {
		problems = append(problems, "missing required columns: "+strings.Join(missing, ", "))
	}
	for _, o := range optionColumns() {
		if h.has(o[0]) != h.has(o[1]) {
			problems = append(problems, fmt.Sprintf("%s and %s come together", columnName(o[0]), columnName(o[1])))
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrHeader, strings.Join(problems, "; "))
	}
	return h, nil
}

// row is one record of the file with the line it starts on.
type row struct {
	line int
	rec  []string
}

// get returns a field of a record, trimmed, or "" when the column is absent or the record short.
func (h *header) get(r row, f field) string {
	i := h.idx[f]
	if i < 0 || i >= len(r.rec) {
		return ""
	}
	return strings.TrimSpace(r.rec[i])
}

// group is the run of consecutive rows sharing a handle: one product.
type group struct {
	handle string
	rows   []row
	// repeatOf is the first line of an earlier group with the same handle (0 when none).
	repeatOf int
	// badWidth is the first row whose field count differs from the header's (nil when none).
	badWidth *row
}

// lineReject is a row rejected on its own: unreadable, or without a handle.
type lineReject struct {
	row    row
	reason string
}

// decoder splits a Shopify product CSV into groups and maps each to a plan. It reads the input
// as a stream and keeps only the current group, plus the handles and SKUs already seen.
type decoder struct {
	cr       *csv.Reader
	h        *header
	bomLen   int64
	next     *row // the first row of the next group, read ahead
	eof      bool
	currency string
	exponent int
	reserved []string
	// handles maps each handle seen to the first line of its group; skus each SKU of an accepted
	// product to its line and handle.
	handles map[string]int
	skus    map[string]skuClaim
	// rejects collects the rows rejected on their own since the caller last took them.
	rejects []lineReject
}

type skuClaim struct {
	line   int
	handle string
}

// newDecoder reads the header from r. currency and exponent are the tenant's default currency.
func newDecoder(r io.Reader, currency string, exponent int) (*decoder, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	d := &decoder{currency: currency, exponent: exponent, reserved: schema.ReservedProductSlugs(),
		handles: map[string]int{}, skus: map[string]skuClaim{}}
	if bom, err := br.Peek(3); err == nil && string(bom) == "\xEF\xBB\xBF" {
		br.Discard(3)
		d.bomLen = 3
	}
	d.cr = csv.NewReader(br)
	d.cr.FieldsPerRecord = -1 // counted here, so that a short row is a reject, not a stop
	rec, err := d.cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%w: the file is empty", ErrHeader)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrHeader, err)
	}
	if d.h, err = parseHeader(rec); err != nil {
		return nil, err
	}
	return d, nil
}

// offset is how many bytes of the input have been consumed.
func (d *decoder) offset() int64 { return d.bomLen + d.cr.InputOffset() }

// read returns the next row that has a handle, or io.EOF. Rows rejected on their own go to
// d.rejects; an error other than io.EOF is an I/O error of the input.
func (d *decoder) read() (*row, error) {
	for {
		rec, err := d.cr.Read()
		if err == io.EOF {
			return nil, io.EOF
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			d.rejects = append(d.rejects, lineReject{row: row{line: pe.StartLine}, reason: "unreadable CSV: " + pe.Err.Error()})
			continue
		}
		if err != nil {
			return nil, err
		}
		line, _ := d.cr.FieldPos(0)
		r := row{line: line, rec: rec}
		blank := true
		for _, f := range rec {
			if strings.TrimSpace(f) != "" {
				blank = false
				break
			}
		}
		if blank {
			continue // spreadsheets leave empty rows at the end
		}
		if d.h.get(r, fHandle) == "" {
			d.rejects = append(d.rejects, lineReject{row: r, reason: "Handle is empty"})
			continue
		}
		return &r, nil
	}
}

// nextGroup returns the next group of rows, or io.EOF.
func (d *decoder) nextGroup() (*group, error) {
	first := d.next
	d.next = nil
	if first == nil {
		if d.eof {
			return nil, io.EOF
		}
		r, err := d.read()
		if err == io.EOF {
			d.eof = true
			return nil, io.EOF
		}
		if err != nil {
			return nil, err
		}
		first = r
	}
	handle := strings.ToLower(d.h.get(*first, fHandle))
	g := &group{handle: handle, rows: []row{*first}}
	if line, ok := d.handles[handle]; ok {
		g.repeatOf = line
	} else {
		d.handles[handle] = first.line
	}
	for {
		r, err := d.read()
		if err == io.EOF {
			d.eof = true
			break
		}
		if err != nil {
			return nil, err
		}
		if strings.ToLower(d.h.get(*r, fHandle)) != handle {
			d.next = r
			break
		}
		g.rows = append(g.rows, *r)
	}
	for i := range g.rows {
		if len(g.rows[i].rec) != len(d.h.names) {
			g.badWidth = &g.rows[i]
			break
		}
	}
	return g, nil
}

// plan is one product of the file, mapped and validated, ready to be matched against the
// catalog and written.
type plan struct {
	rows       []row
	product    schema.Product // Slug, Title, Description, Status, Prices (default currency), Images
	categories []categoryRef  // to create when missing, parents first
	leafSlugs  []string       // the categories the product is put in
	variants   []variantPlan
	warnings   []Warning

	// Which product fields the file sets: an absent column leaves an existing product's value.
	setDescription, setStatus, setImages bool
}

// categoryRef is a category the file names.
type categoryRef struct {
	slug, name string
	parent     string // the parent's slug; "" for a root
}

// variantPlan is one variant of the file.
type variantPlan struct {
	line     int
	sku      string // "" when the file has none
	options  []schema.Option
	title    string
	price    int64
	stock    int64
	setStock bool
}

// rowError is a problem that rejects a product's group: the line it was found on and why.
type rowError struct {
	line   int
	reason string
}

func errorf(line int, format string, args ...any) *rowError {
	return &rowError{line: line, reason: fmt.Sprintf(format, args...)}
}

// plan maps a group to a plan, or returns why the group is rejected. It reads only the file:
// what the catalog holds is checked when the plan is written.
func (d *decoder) plan(g *group) (*plan, *rowError) {
	h := d.h
	first := g.rows[0]
	if g.badWidth != nil {
		return nil, errorf(g.badWidth.line, "the row has %d fields; the header has %d", len(g.badWidth.rec), len(h.names))
	}
	if g.repeatOf > 0 {
		return nil, errorf(first.line, "Handle %q already appeared at line %d: a product's rows must be consecutive", g.handle, g.repeatOf)
	}
	p := &plan{rows: g.rows}
	if err := schema.ValidateSlug("Handle", g.handle, d.reserved); err != nil {
		msg := schema.AsError(err).Message
		if !strings.Contains(msg, strconv.Quote(g.handle)) {
			msg += fmt.Sprintf(" (%q)", g.handle)
		}
		return nil, errorf(first.line, "%s", msg)
	}
	p.product.Slug = g.handle
	p.product.Title = h.get(first, fTitle)
	if p.product.Title == "" {
		return nil, errorf(first.line, "Title is empty on the product's first row")
	}
	p.product.Description = h.get(first, fBody)
	p.setDescription = h.has(fBody)

	status, err := parseStatus(h.get(first, fStatus), h.get(first, fPublished))
	if err != "" {
		return nil, errorf(first.line, "%s", err)
	}
	p.product.Status = status
	p.setStatus = h.has(fStatus) || h.has(fPublished)

	// Option names come from the first row; "Title" / "Default Title" is Shopify's no-option
	// product.
	var names [3]string
	for k, o := range optionColumns() {
		names[k] = h.get(first, o[0])
	}
	noOptions := strings.EqualFold(names[0], "Title") && h.get(first, fOpt1Value) == "Default Title" &&
		names[1] == "" && names[2] == ""
	if noOptions {
		names[0] = ""
	}
	for k := range names {
		for j := range k {
			if names[k] != "" && strings.EqualFold(names[k], names[j]) {
				return nil, errorf(first.line, "option %q is named twice", names[k])
			}
		}
	}

	// Images first, so that a Variant Image naming a product image keeps that image's place.
	var images []schema.Image
	var positions []int
	seenImage := map[string]bool{}
	addImage := func(line int, col field, src, alt string, pos int) *rowError {
		u, err := url.Parse(src)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || len(src) > 2000 {
			return errorf(line, "%s %q is not an absolute http(s) URL", columnName(col), src)
		}
		if !seenImage[src] {
			seenImage[src] = true
			images = append(images, schema.Image{URL: src, Alt: alt})
			positions = append(positions, pos)
		}
		return nil
	}
	for _, r := range g.rows {
		src := h.get(r, fImageSrc)
		if src == "" {
			if h.get(r, fImagePosition) != "" || h.get(r, fImageAlt) != "" {
				return nil, errorf(r.line, "Image Position or Image Alt Text without an Image Src")
			}
			continue
		}
		pos := 1 << 30 // unpositioned images go last, in file order
		if s := h.get(r, fImagePosition); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 {
				return nil, errorf(r.line, "Image Position %q is not a positive integer", s)
			}
			pos = n
		}
		if e := addImage(r.line, fImageSrc, src, h.get(r, fImageAlt), pos); e != nil {
			return nil, e
		}
	}

	combos := map[string]int{}
	skus := map[string]int{}
	for i, r := range g.rows {
		if src := h.get(r, fVariantImage); src != "" {
			if e := addImage(r.line, fVariantImage, src, "", 1<<30); e != nil {
				return nil, e
			}
		}
		// A variant: the first row, and any later row with variant data (the others carry
		// images only).
		sku, price, qty := h.get(r, fSKU), h.get(r, fPrice), h.get(r, fQty)
		var values [3]string
		anyValue := false
		for k, o := range optionColumns() {
			values[k] = h.get(r, o[1])
			anyValue = anyValue || values[k] != ""
			if i > 0 {
				if n := h.get(r, o[0]); n != "" && n != names[k] && !(noOptions && k == 0) {
					return nil, errorf(r.line, "%s %q differs from the product's (%q on line %d)", columnName(o[0]), n, names[k], first.line)
				}
			}
		}
		if i > 0 && !anyValue && sku == "" && price == "" && qty == "" {
			continue
		}
		v := variantPlan{line: r.line, sku: sku}
		var titles []string
		for k := range names {
			switch {
			case noOptions && k == 0:
				if values[0] != "" && values[0] != "Default Title" {
					return nil, errorf(r.line, "Option1 Value %q on a product without options (Option1 Name \"Title\")", values[0])
				}
			case names[k] == "" && values[k] != "":
				return nil, errorf(r.line, "Option%d Value %q has no Option%d Name on the product's first row", k+1, values[k], k+1)
			case names[k] != "" && values[k] == "":
				return nil, errorf(r.line, "Option%d Value is empty (Option%d Name is %q)", k+1, k+1, names[k])
			case names[k] != "":
				v.options = append(v.options, schema.Option{Name: names[k], Value: values[k]})
				titles = append(titles, values[k])
			}
		}
		v.title = strings.Join(titles, " / ")
		key := strings.Join(titles, "\x00")
		if line, ok := combos[key]; ok {
			if len(titles) == 0 {
				return nil, errorf(r.line, "a product without options has one variant; line %d is already it", line)
			}
			return nil, errorf(r.line, "options %q repeat those of line %d", v.title, line)
		}
		combos[key] = r.line
		if sku != "" {
			if line, ok := skus[sku]; ok {
				return nil, errorf(r.line, "Variant SKU %q is also on line %d", sku, line)
			}
			if c, ok := d.skus[sku]; ok {
				return nil, errorf(r.line, "Variant SKU %q is also on line %d (product %q)", sku, c.line, c.handle)
			}
			skus[sku] = r.line
		}
		if price == "" {
			return nil, errorf(r.line, "Variant Price is empty")
		}
		amount, perr := parseMinor(price, d.currency, d.exponent)
		if perr != "" {
			return nil, errorf(r.line, "Variant Price %q %s", price, perr)
		}
		v.price = amount
		if qty != "" {
			n, err := strconv.ParseInt(qty, 10, 64)
			switch {
			case err != nil && !errors.Is(err, strconv.ErrRange):
				return nil, errorf(r.line, "Variant Inventory Qty %q is not an integer", qty)
			case err != nil || n > 1_000_000_000:
				return nil, errorf(r.line, "Variant Inventory Qty %q is out of range (at most 1000000000)", qty)
			case n < 0:
				p.warnings = append(p.warnings, Warning{Line: r.line, Handle: g.handle,
					Message: fmt.Sprintf("Variant Inventory Qty %d is negative (oversold in Shopify); stock set to 0", n)})
				n = 0
			}
			v.stock, v.setStock = n, true
		}
		sv := schema.Variant{SKU: v.sku, Title: v.title, Options: v.options, Position: len(p.variants)}
		if sv.SKU == "" {
			sv.SKU = "X" // one is made when the variant is created
		}
		if err := schema.ValidateVariant(&sv); err != nil {
			return nil, errorf(r.line, "%s", fieldMessage(err))
		}
		p.variants = append(p.variants, v)
	}
	if len(p.variants) > store.MaxVariantsPerProduct {
		return nil, errorf(first.line, "the product has %d variants; Vitrine takes at most %d", len(p.variants), store.MaxVariantsPerProduct)
	}

	order := make([]int, len(images))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return positions[a] - positions[b] })
	for _, i := range order {
		p.product.Images = append(p.product.Images, images[i])
	}
	if len(p.product.Images) > schema.MaxImages {
		p.warnings = append(p.warnings, Warning{Line: first.line, Handle: g.handle,
			Message: fmt.Sprintf("%d images; the first %d are kept", len(p.product.Images), schema.MaxImages)})
		p.product.Images = p.product.Images[:schema.MaxImages]
	}
	p.setImages = h.has(fImageSrc) || h.has(fVariantImage)

	p.product.Prices = schema.Prices{d.currency: p.variants[0].price}
	if err := schema.ValidateProduct(&p.product, d.reserved); err != nil {
		return nil, errorf(first.line, "%s", fieldMessage(err))
	}
	d.categories(p, first)

	for _, v := range p.variants {
		if v.sku != "" {
			d.skus[v.sku] = skuClaim{line: v.line, handle: g.handle}
		}
	}
	return p, nil
}

// categories maps Product Category (a path) and Type (a name) to category references.
func (d *decoder) categories(p *plan, first row) {
	warn := func(format string, args ...any) {
		p.warnings = append(p.warnings, Warning{Line: first.line, Handle: p.product.Slug, Message: fmt.Sprintf(format, args...)})
	}
	add := func(ref categoryRef) bool {
		c := schema.Category{Slug: ref.slug, Name: ref.name}
		if err := schema.ValidateCategory(&c); err != nil {
			warn("category %q skipped: %s", ref.name, schema.AsError(err).Message)
			return false
		}
		if !slices.ContainsFunc(p.categories, func(c categoryRef) bool { return c.slug == ref.slug }) {
			p.categories = append(p.categories, ref)
		}
		return true
	}
	leaf := func(slug string) {
		if !slices.Contains(p.leafSlugs, slug) {
			p.leafSlugs = append(p.leafSlugs, slug)
		}
	}
	if path := d.h.get(first, fCategory); path != "" {
		var levels []string
		for _, l := range strings.Split(path, ">") {
			if l = strings.TrimSpace(l); l != "" {
				levels = append(levels, l)
			}
		}
		if len(levels) > schema.MaxCategoryDepth {
			warn("Product Category %q is deeper than %d levels; the first %d are kept", path, schema.MaxCategoryDepth, schema.MaxCategoryDepth)
			levels = levels[:schema.MaxCategoryDepth]
		}
		parent, ok := "", len(levels) > 0
		for i := range levels {
			slug := schema.Slugify(strings.Join(levels[:i+1], " "))
			if slug == parent {
				warn("Product Category level %q has no letter or digit to make a slug of; skipped", levels[i])
				continue
			}
			if !add(categoryRef{slug: slug, name: levels[i], parent: parent}) {
				ok = false
				break
			}
			parent = slug
		}
		if ok && parent != "" {
			leaf(parent)
		}
	}
	if typ := d.h.get(first, fType); typ != "" {
		slug := schema.Slugify(typ)
		if slug == "" {
			warn("Type %q has no letter or digit to make a category slug of; skipped", typ)
		} else if add(categoryRef{slug: slug, name: typ}) {
			leaf(slug)
		}
	}
}

// fieldMessage is a validation error of the store's rules as a reject reason, naming the file's
// column.
func fieldMessage(err error) string {
	e := schema.AsError(err)
	col := map[string]string{"sku": "Variant SKU", "options": "options", "title": "Title", "description": "Body (HTML)",
		"images": "Image Src", "prices": "Variant Price"}[e.Field]
	if col == "" {
		return e.Message
	}
	return col + ": " + e.Message
}

// parseStatus combines Status and Published into a product status. It returns a reason when
// either cell holds something else than its column allows.
func parseStatus(status, published string) (schema.ProductStatus, string) {
	st := schema.ProductActive
	switch s := strings.ToLower(status); s {
	case "":
	case "active", "draft", "archived":
		st = schema.ProductStatus(s)
	default:
		return "", fmt.Sprintf("Status %q is not active, draft or archived", status)
	}
	switch strings.ToLower(published) {
	case "", "true":
	case "false":
		if st == schema.ProductActive {
			st = schema.ProductDraft
		}
	default:
		return "", fmt.Sprintf("Published %q is not TRUE or FALSE", published)
	}
	return st, ""
}

// parseMinor parses a non-negative decimal amount ("19.99", "20", "1500.00") into minor units of
// a currency with exponent exp, exactly: digits past the exponent must be zeros, since rounding
// would change the merchant's price. It returns a reason (to follow the value, naming currency)
// on failure.
func parseMinor(s, currency string, exp int) (int64, string) {
	intPart, frac, hasDot := strings.Cut(s, ".")
	if intPart == "" || (hasDot && frac == "") {
		return 0, "is not a decimal number such as 19.99"
	}
	for _, part := range []string{intPart, frac} {
		for i := 0; i < len(part); i++ {
			if part[i] < '0' || part[i] > '9' {
				return 0, "is not a decimal number such as 19.99"
			}
		}
	}
	if len(frac) > exp {
		if strings.Trim(frac[exp:], "0") != "" {
			return 0, fmt.Sprintf("has more decimal places than %s allows (%d)", currency, exp)
		}
		frac = frac[:exp]
	}
	frac += strings.Repeat("0", exp-len(frac))
	var n int64
	for _, c := range []byte(strings.TrimLeft(intPart, "0") + frac) {
		n = n*10 + int64(c-'0')
		if n > schema.MaxMinorAmount {
			return 0, "is too large"
		}
	}
	return n, ""
}
