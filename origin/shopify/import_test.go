package shopify_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"vitrine/origin/shopify"
	"vitrine/origin/store"
	"vitrine/origin/store/storetest"
	"vitrine/schema"
)

// catalog is a tenant's replicated catalog, read back through a store snapshot (what `vitrine
// replica rebuild` publishes), with each product's variants.
type catalog struct {
	products   map[string]*schema.Product // by slug
	vis        map[string]schema.Visibility
	variants   map[schema.ProductID][]*schema.Variant
	categories map[string]*schema.Category // by slug
}

func readCatalog(t *testing.T, db *store.DB, slug string) *catalog {
	t.Helper()
	ctx := context.Background()
	log, err := db.LogBySlug(ctx, slug)
	if err != nil {
		t.Fatal(err)
	}
	c := &catalog{products: map[string]*schema.Product{}, vis: map[string]schema.Visibility{},
		variants: map[schema.ProductID][]*schema.Variant{}, categories: map[string]*schema.Category{}}
	_, err = db.Snapshot(ctx, log, func(ch schema.Change) error {
		switch ch.Kind {
		case schema.KindProduct:
			var p schema.Product
			if err := json.Unmarshal(ch.Data, &p); err != nil {
				return err
			}
			c.products[p.Slug], c.vis[p.Slug] = &p, ch.Vis
		case schema.KindVariant:
			var v schema.Variant
			if err := json.Unmarshal(ch.Data, &v); err != nil {
				return err
			}
			c.variants[v.ProductID] = append(c.variants[v.ProductID], &v)
		case schema.KindCategory:
			var cat schema.Category
			if err := json.Unmarshal(ch.Data, &cat); err != nil {
				return err
			}
			c.categories[cat.Slug] = &cat
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// outbox returns the tenant's changes still in the replication outbox, in version order.
func outbox(t *testing.T, db *store.DB, slug string) []*schema.Change {
	t.Helper()
	ctx := context.Background()
	log, err := db.LogBySlug(ctx, slug)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.OutboxRows(ctx, log.ID, 0, 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	var out []*schema.Change
	for _, r := range rows {
		c, err := schema.DecodeChange(r.Body)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// transactions checks that the changes form whole transactions of consecutive versions, each
// within the import's change budget, and returns their sizes.
func transactions(t *testing.T, changes []*schema.Change) []int {
	t.Helper()
	var sizes []int
	for i := 0; i < len(changes); {
		c := changes[i]
		n := int(c.TxnLast - c.TxnFirst + 1)
		if n > schema.MaxChangesPerTxn/2 {
			t.Errorf("a transaction recorded %d changes, more than the import's budget of %d", n, schema.MaxChangesPerTxn/2)
		}
		if i+n > len(changes) || changes[i+n-1].Version != c.TxnLast {
			t.Fatalf("transaction %d..%d is not whole in the outbox", c.TxnFirst, c.TxnLast)
		}
		sizes = append(sizes, n)
		i += n
	}
	return sizes
}

func importFile(t *testing.T, db *store.DB, tn *schema.Tenant, data []byte, opt shopify.Options) *shopify.Report {
	t.Helper()
	rep, err := shopify.Import(context.Background(), db, tn, bytes.NewReader(data), opt)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

type counts struct {
	created, updated, unchanged                  int
	variantsCreated, variantsUpdated, vUnchanged int
	images, categories                           int
	rejectedRows, rejectedProducts, warnings     int
}

func countsOf(r *shopify.Report) counts {
	return counts{r.ProductsCreated, r.ProductsUpdated, r.ProductsUnchanged, r.VariantsCreated, r.VariantsUpdated, r.VariantsUnchanged,
		r.Images, r.CategoriesCreated, len(r.Rejects), r.RejectedProducts, len(r.Warnings)}
}

// The fixture imported twice: the first run creates the catalog and reports the bad rows, the
// second changes nothing; the changes reach the replication outbox in bounded transactions and
// equal the snapshot.
func TestImportFixtureTwice(t *testing.T) {
	ctx := context.Background()
	db, _ := storetest.Open(t, store.Config{})
	tn := storetest.Tenant(t, db, "shop")
	fixture, err := os.ReadFile("testdata/products.csv")
	if err != nil {
		t.Fatal(err)
	}

	var rejects bytes.Buffer
	var progress []shopify.Progress
	first := importFile(t, db, tn, fixture, shopify.Options{BatchProducts: 2, Rejects: &rejects,
		Progress: func(p shopify.Progress) { progress = append(progress, p) }})
	// The tenant's USD has no currency record (storetest makes none): 2 decimals, with a warning;
	// classic-tee's negative stock is the other warning.
	want := counts{created: 5, variantsCreated: 10, images: 7, categories: 10, rejectedRows: 5, rejectedProducts: 3, warnings: 2}
	if got := countsOf(first); got != want {
		t.Errorf("first import: %+v\nwant                %+v", got, want)
	}
	if first.Rows != 17 || first.Transactions < 3 {
		t.Errorf("rows, transactions = %d, %d; want 17 and at least 3 (2 products per batch)", first.Rows, first.Transactions)
	}
	wantRejects := []shopify.Reject{
		{Line: 17, Handle: "bad-price-mug", Reason: `rejected with its product: line 18: Variant Price "12.345" has more decimal places than USD allows (2)`},
		{Line: 18, Handle: "bad-price-mug", Reason: `Variant Price "12.345" has more decimal places than USD allows (2)`},
		{Line: 19, Reason: "Handle is empty"},
		{Line: 20, Handle: "dup-sku-cap", Reason: `Variant SKU "TEE-BLK-S" is also on line 2 (product "classic-tee")`},
		{Line: 22, Handle: "featured", Reason: `Handle "featured" is reserved`},
	}
	if !slices.Equal(first.Rejects, wantRejects) {
		t.Errorf("rejects:\n%+v\nwant\n%+v", first.Rejects, wantRejects)
	}
	if len(progress) == 0 || progress[len(progress)-1].Bytes != int64(len(fixture)) || progress[len(progress)-1].Products != 5 {
		t.Errorf("progress = %+v, want the last one at the file's end with 5 products", progress)
	}

	// The rejects file has the original rows after Line and Reason, and imports as the same rejects.
	recs, err := csv.NewReader(bytes.NewReader(rejects.Bytes())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1+len(wantRejects) || recs[0][0] != "Line" || recs[0][2] != "Handle" || recs[2][0] != "18" || recs[2][2] != "bad-price-mug" {
		t.Errorf("rejects file = %q", recs)
	}

	// The catalog, as replicated.
	cat := readCatalog(t, db, "shop")
	wantVis := map[string]schema.Visibility{"classic-tee": schema.Pub, "canvas-tote": schema.Pub, "winter-beanie": schema.Priv,
		"wool-socks": schema.Priv, "archived-poster": schema.Priv}
	if len(cat.products) != len(wantVis) {
		t.Errorf("products = %d, want %d", len(cat.products), len(wantVis))
	}
	for slug, vis := range wantVis {
		if cat.vis[slug] != vis {
			t.Errorf("%s is at %q, want %q", slug, cat.vis[slug], vis)
		}
	}
	tee := cat.products["classic-tee"]
	teeVars := cat.variants[tee.ID]
	var skus []string
	for _, v := range teeVars {
		skus = append(skus, fmt.Sprintf("%s:%v:%s", v.SKU, v.Prices, v.Availability))
	}
	if want := []string{"TEE-BLK-S:map[]:in_stock", "TEE-BLK-M:map[]:out_of_stock", "TEE-WHT-S:map[USD:2750]:low_stock", "TEE-WHT-M:map[USD:2750]:out_of_stock"}; !slices.Equal(skus, want) {
		t.Errorf("classic-tee variants = %q, want %q", skus, want)
	}
	if tee.Prices["USD"] != 2500 || len(tee.Images) != 3 || len(tee.CategoryIDs) != 2 {
		t.Errorf("classic-tee = %+v", tee)
	}
	shirts := cat.categories["apparel-accessories-clothing-shirts-tops"]
	if shirts == nil || shirts.Name != "Shirts & Tops" || cat.categories["apparel-accessories-clothing"].ID != shirts.ParentID ||
		!slices.Contains(tee.CategoryIDs, shirts.ID) {
		t.Errorf("category tree: %+v", shirts)
	}
	beanie := cat.products["winter-beanie"]
	var made []string
	for _, v := range cat.variants[beanie.ID] {
		made = append(made, v.SKU)
	}
	if !slices.Equal(made, []string{"WINTER-BEANIE-RED", "WINTER-BEANIE-NAVY"}) {
		t.Errorf("made SKUs = %q", made)
	}

	changes := outbox(t, db, "shop")
	sizes := transactions(t, changes)
	if len(sizes) != first.Transactions {
		t.Errorf("outbox has %d transactions, the report %d", len(sizes), first.Transactions)
	}
	// 10 categories, 5 products, 10 variants: one change each.
	if len(changes) != 25 {
		t.Errorf("outbox has %d changes, want 25", len(changes))
	}
	latest := map[string]*schema.Change{}
	for _, c := range changes {
		latest[c.Key()] = c
	}
	log, _ := db.LogBySlug(ctx, "shop")
	_, err = db.Snapshot(ctx, log, func(c schema.Change) error {
		if o := latest[c.Key()]; o == nil || string(o.Data) != string(c.Data) {
			t.Errorf("snapshot and outbox differ on %s", c.Key())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// Again: nothing changes, nothing is duplicated, the same rows are rejected.
	second := importFile(t, db, tn, fixture, shopify.Options{})
	want = counts{unchanged: 5, vUnchanged: 10, images: 7, rejectedRows: 5, rejectedProducts: 3, warnings: 2}
	if got := countsOf(second); got != want {
		t.Errorf("second import: %+v\nwant                 %+v", got, want)
	}
	if !slices.Equal(second.Rejects, wantRejects) {
		t.Errorf("second rejects = %+v", second.Rejects)
	}
	if n := len(outbox(t, db, "shop")); n != len(changes) {
		t.Errorf("the second import recorded %d changes, want none", n-len(changes))
	}
	if again := readCatalog(t, db, "shop"); len(again.products) != 5 || len(again.categories) != 10 || len(again.variants[tee.ID]) != 4 {
		t.Errorf("after the second import: %d products, %d categories, %d tee variants", len(again.products), len(again.categories), len(again.variants[tee.ID]))
	}

	// An edited export: a price, a stock, a publication and a SKU-less variant's option order
	// change; a variant is added. Matching keeps every id.
	edited := strings.NewReplacer(
		"TOTE-01,400,shopify,40,deny,manual,18,", "TOTE-01,400,shopify,41,deny,manual,19.50,",
		"Socks,,FALSE,", "Socks,,TRUE,",
	).Replace(string(fixture))
	edited = strings.Replace(edited, "wool-socks,,,,,,,,,L-XL,,,,,,,,SOCK-LXL,,shopify,25,deny,manual,9.50,,TRUE,TRUE,,,,,,,,,,g,,,\n",
		"wool-socks,,,,,,,,,L-XL,,,,,,,,SOCK-LXL,,shopify,25,deny,manual,9.50,,TRUE,TRUE,,,,,,,,,,g,,,\n"+
			"wool-socks,,,,,,,,,XXL,,,,,,,,SOCK-XXL,,shopify,5,deny,manual,10.50,,TRUE,TRUE,,,,,,,,,,g,,,\n", 1)
	third := importFile(t, db, tn, []byte(edited), shopify.Options{})
	want = counts{updated: 2, unchanged: 3, variantsCreated: 1, variantsUpdated: 1, vUnchanged: 9, images: 7, rejectedRows: 5, rejectedProducts: 3, warnings: 2}
	if got := countsOf(third); got != want {
		t.Errorf("edited import: %+v\nwant                 %+v", got, want)
	}
	after := readCatalog(t, db, "shop")
	socks := after.products["wool-socks"]
	if after.vis["wool-socks"] != schema.Pub || len(after.variants[socks.ID]) != 3 || after.products["canvas-tote"].Prices["USD"] != 1950 {
		t.Errorf("after the edit: socks at %s with %d variants, tote %v", after.vis["wool-socks"], len(after.variants[socks.ID]),
			after.products["canvas-tote"].Prices)
	}
	if socks.ID != cat.products["wool-socks"].ID {
		t.Errorf("wool-socks changed id")
	}
	transactions(t, outbox(t, db, "shop"))
}

// A file without the required columns writes nothing.
func TestImportBadHeaderWritesNothing(t *testing.T) {
	db, _ := storetest.Open(t, store.Config{})
	tn := storetest.Tenant(t, db, "shop")
	_, err := shopify.Import(context.Background(), db, tn, strings.NewReader("Handle,Body (HTML)\ntee,<p>x</p>\n"), shopify.Options{})
	if !errors.Is(err, shopify.ErrHeader) || !strings.Contains(err.Error(), "Title, Variant Price") {
		t.Fatalf("err = %v, want ErrHeader naming Title and Variant Price", err)
	}
	if n := len(outbox(t, db, "shop")); n != 0 {
		t.Errorf("outbox has %d changes", n)
	}
}

// Large products stay within the change budget: 100-variant products imported as drafts, then
// published (each product and all its variants move to the public read model, then the variants
// are updated), with a batch size that would otherwise take them all in one transaction.
func TestImportLargeProductsStayInBudget(t *testing.T) {
	db, _ := storetest.Open(t, store.Config{})
	tn := storetest.Tenant(t, db, "shop")
	gen := func(status, price string) []byte {
		var b strings.Builder
		b.WriteString("Handle,Title,Option1 Name,Option1 Value,Variant SKU,Variant Price,Status\n")
		for p := range 6 {
			for v := range store.MaxVariantsPerProduct {
				title, name := "", ""
				if v == 0 {
					title, name = fmt.Sprintf("Product %d", p), "Size"
				}
				fmt.Fprintf(&b, "p%d,%s,%s,%d,P%d-%d,%s,%s\n", p, title, name, v, p, v, price, status)
			}
		}
		return []byte(b.String())
	}
	r := importFile(t, db, tn, gen("draft", "10.00"), shopify.Options{BatchProducts: 1000})
	if r.ProductsCreated != 6 || r.VariantsCreated != 600 || len(r.Rejects) != 0 {
		t.Fatalf("first import: %+v", r)
	}
	r = importFile(t, db, tn, gen("active", "11.00"), shopify.Options{BatchProducts: 1000})
	if r.ProductsUpdated != 6 || r.VariantsUpdated != 0 || r.VariantsUnchanged != 600 || len(r.Rejects) != 0 {
		t.Fatalf("publishing import: %+v", r) // the price is the product's: variants carry no override
	}
	sizes := transactions(t, outbox(t, db, "shop"))
	for _, n := range sizes {
		if n > schema.MaxChangesPerTxn/2 {
			t.Errorf("transaction of %d changes", n)
		}
	}
	if cat := readCatalog(t, db, "shop"); len(cat.products) != 6 || cat.vis["p5"] != schema.Pub {
		t.Errorf("published catalog: %d products, p5 at %s", len(cat.products), cat.vis["p5"])
	}
}

// A SKU that another product of the catalog holds rejects the product, not the batch.
func TestImportSKUOfAnotherProduct(t *testing.T) {
	db, _ := storetest.Open(t, store.Config{})
	tn := storetest.Tenant(t, db, "shop")
	importFile(t, db, tn, []byte("Handle,Title,Variant SKU,Variant Price\nmug,Mug,MUG-1,8.00\n"), shopify.Options{})
	r := importFile(t, db, tn, []byte("Handle,Title,Variant SKU,Variant Price\ncup,Cup,MUG-1,8.00\nbowl,Bowl,BOWL-1,9.00\n"), shopify.Options{})
	if r.ProductsCreated != 1 || len(r.Rejects) != 1 || r.Rejects[0].Line != 2 || !strings.Contains(r.Rejects[0].Reason, `Variant SKU "MUG-1" already belongs to another product`) {
		t.Errorf("report = %+v", r)
	}
}

// A product the store refuses for a reason the importer does not check beforehand (here a
// category that would nest too deep under an existing tree) fails its batch's transaction; the
// batch is then written product by product, and only that product is rejected.
func TestImportStoreRefusalRejectsOnlyItsProduct(t *testing.T) {
	ctx := context.Background()
	db, _ := storetest.Open(t, store.Config{})
	tn := storetest.Tenant(t, db, "shop")
	_, err := db.WriteTx(ctx, func(tx *store.Tx) error {
		var parent schema.CategoryID
		for i := range schema.MaxCategoryDepth {
			c := &schema.Category{Slug: fmt.Sprintf("level-%d", i), Name: "Level", ParentID: parent}
			if i == schema.MaxCategoryDepth-1 {
				c.Slug = "deep"
			}
			if err := tx.CreateCategory(ctx, tn, c); err != nil {
				return err
			}
			parent = c.ID
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	file := "Handle,Title,Variant Price,Product Category\n" +
		"first,First,1.00,\n" +
		"too-deep,Too Deep,2.00,Deep > Deeper\n" +
		"last,Last,3.00,Deep\n"
	r := importFile(t, db, tn, []byte(file), shopify.Options{})
	if r.ProductsCreated != 2 || r.CategoriesCreated != 0 || len(r.Rejects) != 1 || r.Rejects[0].Line != 3 ||
		!strings.Contains(r.Rejects[0].Reason, "categories nest at most 8 deep") {
		t.Errorf("report = %+v", r)
	}
	if cat := readCatalog(t, db, "shop"); cat.products["last"] == nil || len(cat.products["last"].CategoryIDs) != 1 || cat.products["too-deep"] != nil {
		t.Errorf("catalog = %+v", cat.products)
	}
}
