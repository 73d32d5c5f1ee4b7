package shopify

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"vitrine/origin/store"
	"vitrine/schema"
)

// DefaultBatchProducts is the default number of products written per transaction.
const DefaultBatchProducts = 50

// maxPendingRejects bounds the rejected rows (with their fields) held between two flushes: a file
// of mostly bad rows is written out as it is read.
const maxPendingRejects = 1000

// changeBudget bounds the replicated changes of one import transaction: half of what a
// transaction may record, so that the largest product (store.MaxVariantsPerProduct variants moved
// between read models, then updated, plus its categories: about 320 changes) always fits alone,
// and so that a batch holds the tenant's log row for a short time only.
const changeBudget = schema.MaxChangesPerTxn / 2

// Options controls an import. Zero values mean the defaults.
type Options struct {
	// BatchProducts is the most products written per transaction (default DefaultBatchProducts).
	// A transaction also ends before it would record more than changeBudget replicated changes.
	BatchProducts int
	// Rejects, when set, receives the rejected rows as CSV: the columns Line and Reason, then the
	// file's own columns and fields, so that the file can be corrected and imported again.
	Rejects io.Writer
	// Progress, when set, is called after each batch of products is written (and after a run of
	// rejected rows), from the goroutine that called Import.
	Progress func(Progress)
}

// Import reads a Shopify product CSV export from r and writes its products into the tenant's
// catalog, creating or updating them by slug (see the package documentation for the mapping).
// Rejected rows are reported, not fatal. Import stops with an error when the header is unusable
// (ErrHeader, before any write), when r fails, or when the database fails for another reason
// than a product's data; what was committed before stays, and importing the file again resumes
// idempotently. The report is never nil.
func Import(ctx context.Context, db *store.DB, t *schema.Tenant, r io.Reader, opt Options) (*Report, error) {
	rep := &Report{Currency: t.DefaultCurrency(), Exponent: 2}
	if opt.BatchProducts <= 0 {
		opt.BatchProducts = DefaultBatchProducts
	}
	opt.BatchProducts = min(opt.BatchProducts, 1000)
	if rep.Currency == "" {
		return rep, fmt.Errorf("shopify: tenant %s has no currency", t.Slug)
	}
	err := db.Tx(ctx, func(tx *store.Tx) error {
		c, err := tx.Currency(ctx, t, rep.Currency)
		if err == nil {
			rep.Exponent = c.Exponent
		} else if schema.ErrorCode(err) == schema.CodeNotFound {
			rep.Warnings = append(rep.Warnings, Warning{Message: fmt.Sprintf(
				"the default currency %s has no currency record; prices are read with 2 decimal places, as readers assume", rep.Currency)})
			err = nil
		}
		return err
	})
	if err != nil {
		return rep, fmt.Errorf("shopify: read the default currency: %w", err)
	}
	dec, err := newDecoder(r, rep.Currency, rep.Exponent)
	if err != nil {
		return rep, err
	}
	im := &importer{db: db, t: t, opt: opt, rep: rep, dec: dec}
	if opt.Rejects != nil {
		im.rw = newRejectsWriter(opt.Rejects, dec.h.names)
	}
	for {
		g, err := dec.nextGroup()
		im.takeLineRejects()
		if err == io.EOF {
			break
		}
		if err != nil {
			im.flushRejects()
			return rep, fmt.Errorf("shopify: read: %w", err)
		}
		rep.Rows += len(g.rows)
		p, rerr := dec.plan(g)
		if rerr != nil {
			im.rejectGroup(g.handle, g.rows, rerr)
			if len(im.rejects) >= maxPendingRejects {
				if err := im.flush(ctx); err != nil {
					return rep, err
				}
			}
			continue
		}
		im.batch = append(im.batch, p)
		if len(im.batch) >= opt.BatchProducts || len(im.rejects) >= maxPendingRejects {
			if err := im.flush(ctx); err != nil {
				return rep, err
			}
		}
	}
	if err := im.flush(ctx); err != nil {
		return rep, err
	}
	if im.rw != nil && !im.rw.wrote {
		return rep, im.rw.write(nil) // the header alone: nothing was rejected
	}
	return rep, nil
}

// importer is the state of one Import call. It is used by one goroutine.
type importer struct {
	db    *store.DB
	t     *schema.Tenant
	opt   Options
	rep   *Report
	dec   *decoder
	rw    *rejectsWriter
	batch []*plan
	// rejects are the rejects since the last flush, written (in line order) at the next one.
	rejects []rejected
}

// takeLineRejects moves the rows the decoder rejected on their own to the pending rejects.
func (im *importer) takeLineRejects() {
	for _, lr := range im.dec.rejects {
		im.rep.Rows++
		im.rejects = append(im.rejects, rejected{Reject: Reject{Line: lr.row.line, Reason: lr.reason}, rec: lr.row.rec})
	}
	im.dec.rejects = im.dec.rejects[:0]
}

// rejectGroup rejects every row of a product's group: the row at fault with the reason, the
// others as rejected with it.
func (im *importer) rejectGroup(handle string, rows []row, e *rowError) {
	im.rep.RejectedProducts++
	for _, r := range rows {
		reason := e.reason
		if r.line != e.line {
			reason = fmt.Sprintf("rejected with its product: line %d: %s", e.line, e.reason)
		}
		im.rejects = append(im.rejects, rejected{Reject: Reject{Line: r.line, Handle: handle, Reason: reason}, rec: r.rec})
	}
}

// flush writes the pending batch in as few transactions as the change budget allows, then the
// pending rejects, then reports progress.
func (im *importer) flush(ctx context.Context) error {
	pending := im.batch
	im.batch = nil
	for len(pending) > 0 {
		n, out, err := im.writeBatch(ctx, pending)
		if isDataError(err) && len(pending) > 1 {
			// A product failed a check of the store that the plan and the lookups did not
			// foresee, and took its batch with it: write the batch's products one by one, so
			// that only that product is rejected.
			for _, p := range pending {
				if err := im.writeAlone(ctx, p); err != nil {
					im.flushRejects()
					return err
				}
			}
			break
		}
		if isDataError(err) {
			im.rejectGroup(pending[0].product.Slug, pending[0].rows, &rowError{line: pending[0].rows[0].line, reason: schema.AsError(err).Message})
			n, err = 1, nil
		}
		if err != nil {
			im.flushRejects()
			return fmt.Errorf("shopify: write products from line %d: %w", pending[0].rows[0].line, err)
		}
		if out != nil {
			im.commit(out)
		}
		pending = pending[n:]
	}
	if err := im.flushRejects(); err != nil {
		return err
	}
	if im.opt.Progress != nil {
		im.opt.Progress(Progress{Bytes: im.dec.offset(), Rows: im.rep.Rows, Products: im.rep.Products(), Rejected: len(im.rep.Rejects)})
	}
	return nil
}

// writeAlone writes one plan in its own transaction, rejecting it when its data fails.
func (im *importer) writeAlone(ctx context.Context, p *plan) error {
	_, out, err := im.writeBatch(ctx, []*plan{p})
	if isDataError(err) {
		im.rejectGroup(p.product.Slug, p.rows, &rowError{line: p.rows[0].line, reason: schema.AsError(err).Message})
		return nil
	}
	if err != nil {
		return fmt.Errorf("shopify: write product %s (line %d): %w", p.product.Slug, p.rows[0].line, err)
	}
	im.commit(out)
	return nil
}

// isDataError reports whether err is about the data written (a validation or a conflict),
// rather than the database being unavailable or failing.
func isDataError(err error) bool {
	if err == nil {
		return false
	}
	switch schema.ErrorCode(err) {
	case schema.CodeInvalid, schema.CodeConflict, schema.CodeNotFound:
		return true
	}
	return false
}

// flushRejects writes the pending rejects, in line order, to the report and the rejects file.
func (im *importer) flushRejects() error {
	if len(im.rejects) == 0 {
		return nil
	}
	sortRejects(im.rejects)
	for _, r := range im.rejects {
		im.rep.Rejects = append(im.rep.Rejects, r.Reject)
	}
	var err error
	if im.rw != nil {
		err = im.rw.write(im.rejects)
	}
	im.rejects = im.rejects[:0]
	return err
}

// outcome is what one committed transaction did; it reaches the report only after the commit.
type outcome struct {
	productsCreated, productsUpdated, productsUnchanged int
	variantsCreated, variantsUpdated, variantsUnchanged int
	images, categoriesCreated                           int
	warnings                                            []Warning
	rejected                                            []*planReject
}

type planReject struct {
	p   *plan
	err *rowError
}

func (im *importer) commit(out *outcome) {
	r := im.rep
	r.Transactions++
	r.ProductsCreated += out.productsCreated
	r.ProductsUpdated += out.productsUpdated
	r.ProductsUnchanged += out.productsUnchanged
	r.VariantsCreated += out.variantsCreated
	r.VariantsUpdated += out.variantsUpdated
	r.VariantsUnchanged += out.variantsUnchanged
	r.Images += out.images
	r.CategoriesCreated += out.categoriesCreated
	r.Warnings = append(r.Warnings, out.warnings...)
	for _, pr := range out.rejected {
		im.rejectGroup(pr.p.product.Slug, pr.p.rows, pr.err)
	}
}

// writeBatch writes a prefix of plans in one transaction and returns its length: it stops before
// a plan that would take the transaction past changeBudget changes (the first plan is always
// taken). A plan the catalog refuses (a SKU of another product, too many variants) is consumed
// as rejected, with nothing written for it.
func (im *importer) writeBatch(ctx context.Context, plans []*plan) (int, *outcome, error) {
	var n int
	var out *outcome
	_, err := im.db.WriteTx(ctx, func(tx *store.Tx) error {
		// The function may run more than once: everything it decides starts afresh.
		n, out = 0, &outcome{}
		bw, err := im.lookup(ctx, tx, plans)
		if err != nil {
			return err
		}
		used := 0
		for i, p := range plans {
			w, rerr := bw.match(p)
			if rerr != nil {
				out.rejected = append(out.rejected, &planReject{p: p, err: rerr})
				n = i + 1
				continue
			}
			if i > 0 && used+w.cost > changeBudget {
				break
			}
			if err := bw.apply(ctx, tx, w, out); err != nil {
				return fmt.Errorf("product %s (line %d): %w", p.product.Slug, p.rows[0].line, err)
			}
			used += w.cost
			n = i + 1
		}
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	return n, out, nil
}

// batchWriter holds what one transaction read of the catalog for a batch of plans, and what it
// has written so far.
type batchWriter struct {
	im       *importer
	products map[string]*schema.Product
	variants map[schema.ProductID][]*store.StockedVariant
	// owners maps the SKUs the batch names (and the SKUs it would make) to their variants.
	owners map[string]*store.StockedVariant
	// taken holds every SKU a new variant must not take: the owners' and the file's.
	taken      map[string]bool
	categories map[string]schema.CategoryID
}

// lookup reads, in four queries, what the batch's plans need of the catalog.
func (im *importer) lookup(ctx context.Context, tx *store.Tx, plans []*plan) (*batchWriter, error) {
	bw := &batchWriter{im: im, taken: map[string]bool{}, categories: map[string]schema.CategoryID{}}
	var slugs, skus, cats []string
	for _, p := range plans {
		slugs = append(slugs, p.product.Slug)
		for j, v := range p.variants {
			if v.sku != "" {
				skus = append(skus, v.sku)
				bw.taken[v.sku] = true
			} else {
				skus = append(skus, madeSKU(p.product.Slug, v, j))
			}
		}
		for _, c := range p.categories {
			cats = append(cats, c.slug)
		}
	}
	var err error
	if bw.products, err = tx.ProductsBySlug(ctx, im.t, slugs); err != nil {
		return nil, err
	}
	ids := make([]schema.ProductID, 0, len(bw.products))
	for _, p := range bw.products {
		ids = append(ids, p.ID)
	}
	if bw.variants, err = tx.VariantsOfProducts(ctx, im.t, ids); err != nil {
		return nil, err
	}
	if bw.owners, err = tx.VariantsBySKU(ctx, im.t, skus); err != nil {
		return nil, err
	}
	for sku := range bw.owners {
		bw.taken[sku] = true
	}
	found, err := tx.CategoriesBySlug(ctx, im.t, cats)
	if err != nil {
		return nil, err
	}
	for slug, c := range found {
		bw.categories[slug] = c.ID
	}
	return bw, nil
}

// write is one plan matched against the catalog: what to write and how many changes it records.
type write struct {
	p        *plan
	old      *schema.Product // nil for a new product
	product  *schema.Product // the product to write over old
	changed  bool            // product differs from old (always true for a new product)
	oldVars  []*store.StockedVariant
	matched  []*store.StockedVariant // per plan variant: the existing one, or nil
	vars     []*store.StockedVariant // per plan variant: the variant to write
	newCats  []categoryRef
	cost     int
	pendCats bool // the product's categories include some still to create
}

// match decides, without writing, what the plan changes: the product to create or update, and
// each variant's existing match (by SKU, then by option values). It refuses a plan whose SKU
// belongs to another product, or that would give its product too many variants.
func (bw *batchWriter) match(p *plan) (*write, *rowError) {
	w := &write{p: p, old: bw.products[p.product.Slug], matched: make([]*store.StockedVariant, len(p.variants))}
	if w.old != nil {
		w.oldVars = bw.variants[w.old.ID]
	}
	used := map[schema.VariantID]bool{}
	for j, v := range p.variants {
		if v.sku == "" {
			continue
		}
		o := bw.owners[v.sku]
		if o == nil {
			continue
		}
		if w.old == nil || o.ProductID != w.old.ID {
			return nil, errorf(v.line, "Variant SKU %q already belongs to another product (id %d)", v.sku, o.ProductID)
		}
		w.matched[j] = o
		used[o.ID] = true
	}
	for j, v := range p.variants {
		if w.matched[j] != nil {
			continue
		}
		for _, e := range w.oldVars {
			if !used[e.ID] && slices.Equal(e.Options, v.options) {
				w.matched[j] = e
				used[e.ID] = true
				break
			}
		}
	}
	creates := 0
	for _, m := range w.matched {
		if m == nil {
			creates++
		}
	}
	if len(w.oldVars)+creates > store.MaxVariantsPerProduct {
		return nil, errorf(p.rows[0].line, "the product would have %d variants (%d already, %d new); Vitrine takes at most %d",
			len(w.oldVars)+creates, len(w.oldVars), creates, store.MaxVariantsPerProduct)
	}

	// Categories to create, and whether the product's category ids are all known.
	for _, c := range p.categories {
		if _, ok := bw.categories[c.slug]; !ok {
			w.newCats = append(w.newCats, c)
		}
	}
	for _, s := range p.leafSlugs {
		if _, ok := bw.categories[s]; !ok {
			w.pendCats = true
		}
	}
	w.product = bw.mergeProduct(w.old, p)
	w.changed = w.old == nil || w.pendCats || !sameProduct(w.old, w.product)
	w.cost = len(w.newCats)
	switch {
	case w.old == nil:
		w.cost++
	case w.changed && w.old.Public() != w.product.Public():
		w.cost += 2 + 2*len(w.oldVars) // the product and its variants move between read models
	case w.changed:
		w.cost++
	}
	price := p.product.Prices[bw.im.rep.Currency]
	w.vars = make([]*store.StockedVariant, len(p.variants))
	for j, v := range p.variants {
		nv := mergeVariant(w.matched[j], v, j, bw.im.rep.Currency, price)
		w.vars[j] = nv
		if w.matched[j] == nil || !sameVariant(w.matched[j], nv) {
			w.cost++
		}
	}
	return w, nil
}

// mergeProduct returns the product to write: old (or a new product) with the file's fields. A
// field whose column the file lacks keeps old's value; categories are added to old's.
func (bw *batchWriter) mergeProduct(old *schema.Product, p *plan) *schema.Product {
	np := &schema.Product{}
	if old != nil {
		*np = *old
		np.Prices = maps.Clone(old.Prices)
		np.CategoryIDs = slices.Clone(old.CategoryIDs)
	}
	if np.Prices == nil {
		np.Prices = schema.Prices{}
	}
	np.Slug, np.Title = p.product.Slug, p.product.Title
	if old == nil || p.setDescription {
		np.Description = p.product.Description
	}
	if old == nil || p.setStatus {
		np.Status = p.product.Status
	}
	if old == nil || p.setImages {
		np.Images = make([]schema.Image, len(p.product.Images))
		for i, im := range p.product.Images {
			if old != nil {
				// Keep the sizes a merchant may have set on the same image since.
				if k := slices.IndexFunc(old.Images, func(o schema.Image) bool { return o.URL == im.URL }); k >= 0 {
					im.Width, im.Height = old.Images[k].Width, old.Images[k].Height
				}
			}
			np.Images[i] = im
		}
	}
	maps.Copy(np.Prices, p.product.Prices)
	for _, s := range p.leafSlugs {
		if id, ok := bw.categories[s]; ok && !slices.Contains(np.CategoryIDs, id) {
			np.CategoryIDs = append(np.CategoryIDs, id)
		}
	}
	np.Normalize()
	return np
}

// mergeVariant returns the variant to write: old (or a new variant) with the file's fields. The
// variant's price in the default currency is an override only when it differs from the
// product's; its prices in other currencies are kept.
func mergeVariant(old *store.StockedVariant, v variantPlan, position int, currency string, productPrice int64) *store.StockedVariant {
	nv := &store.StockedVariant{}
	if old != nil {
		*nv = *old
		nv.Prices = maps.Clone(old.Prices)
	}
	if nv.Prices == nil {
		nv.Prices = schema.Prices{}
	}
	if v.sku != "" {
		nv.SKU = v.sku
	}
	nv.Title, nv.Position = v.title, position
	nv.Options = slices.Clone(v.options)
	if v.price != productPrice {
		nv.Prices[currency] = v.price
	} else {
		delete(nv.Prices, currency)
	}
	if v.setStock || old == nil {
		nv.Stock = v.stock
	}
	nv.Normalize()
	return nv
}

func sameProduct(a, b *schema.Product) bool {
	return a.Slug == b.Slug && a.Title == b.Title && a.Description == b.Description && a.Status == b.Status &&
		maps.Equal(a.Prices, b.Prices) && slices.Equal(a.Images, b.Images) && slices.Equal(a.CategoryIDs, b.CategoryIDs)
}

func sameVariant(a, b *store.StockedVariant) bool {
	return a.SKU == b.SKU && a.Title == b.Title && slices.Equal(a.Options, b.Options) && maps.Equal(a.Prices, b.Prices) &&
		a.Stock == b.Stock && a.Position == b.Position
}

// madeSKU is the SKU of a new variant the file gives none: the handle in capitals (as the admin
// API makes for a default variant), then the option values, or the position when the values
// make no SKU characters.
func madeSKU(slug string, v variantPlan, position int) string {
	base := strings.ToUpper(slug)
	if len(base) > 60 {
		base = strings.TrimRight(base[:60], "-")
	}
	if len(v.options) == 0 {
		return base
	}
	var values []string
	for _, o := range v.options {
		values = append(values, o.Value)
	}
	suffix := strings.ToUpper(schema.Slugify(strings.Join(values, " ")))
	if suffix == "" {
		suffix = strconv.Itoa(position + 1)
	}
	if len(suffix) > 30 {
		suffix = strings.TrimRight(suffix[:30], "-")
	}
	return base + "-" + suffix
}

// apply writes a matched plan: missing categories (parents first), the product, its variants.
func (bw *batchWriter) apply(ctx context.Context, tx *store.Tx, w *write, out *outcome) error {
	im := bw.im
	for _, c := range w.newCats {
		cat := &schema.Category{Slug: c.slug, Name: c.name}
		if c.parent != "" {
			cat.ParentID = bw.categories[c.parent]
		}
		if err := tx.CreateCategory(ctx, im.t, cat); err != nil {
			return fmt.Errorf("category %s: %w", c.slug, err)
		}
		bw.categories[c.slug] = cat.ID
		out.categoriesCreated++
	}
	if w.pendCats {
		w.product = bw.mergeProduct(w.old, w.p)
	}
	np := w.product
	switch {
	case w.old == nil:
		if err := tx.CreateProduct(ctx, im.t, np); err != nil {
			return err
		}
		out.productsCreated++
	case w.changed:
		if err := tx.UpdateProduct(ctx, im.t, w.old, np); err != nil {
			return err
		}
		out.productsUpdated++
	default:
		out.productsUnchanged++
	}
	for j, nv := range w.vars {
		old := w.matched[j]
		switch {
		case old == nil:
			nv.ProductID = np.ID
			if nv.SKU == "" {
				sku, err := bw.freeSKU(ctx, tx, madeSKU(np.Slug, w.p.variants[j], j))
				if err != nil {
					return err
				}
				nv.SKU = sku
			}
			if err := tx.CreateVariant(ctx, im.t, nv); err != nil {
				return fmt.Errorf("variant %s: %w", nv.SKU, err)
			}
			bw.taken[nv.SKU] = true
			out.variantsCreated++
		case !sameVariant(old, nv):
			if err := tx.UpdateVariant(ctx, im.t, old, nv); err != nil {
				return fmt.Errorf("variant %s: %w", nv.SKU, err)
			}
			bw.taken[nv.SKU] = true
			out.variantsUpdated++
		default:
			out.variantsUnchanged++
		}
	}
	out.images += len(np.Images)
	out.warnings = append(out.warnings, w.p.warnings...)
	return nil
}

// freeSKU returns base, or base-2, base-3… for the first one no variant has and the file does not
// name. base itself was looked up with the batch; the others are looked up here.
func (bw *batchWriter) freeSKU(ctx context.Context, tx *store.Tx, base string) (string, error) {
	if !bw.taken[base] {
		return base, nil
	}
	for k := 2; k < 1000; k++ {
		sku := base + "-" + strconv.Itoa(k)
		if bw.taken[sku] {
			continue
		}
		found, err := tx.VariantsBySKU(ctx, bw.im.t, []string{sku})
		if err != nil {
			return "", err
		}
		if len(found) == 0 {
			return sku, nil
		}
		bw.taken[sku] = true
	}
	return "", schema.Errorf(schema.CodeConflict, "no free SKU for %s", base)
}
