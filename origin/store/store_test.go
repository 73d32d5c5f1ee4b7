package store_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"vitrine/origin/store"
	"vitrine/origin/store/storetest"
	"vitrine/schema"
)

func product(slug string) *schema.Product {
	return &schema.Product{Slug: slug, Title: "Product " + slug, Status: schema.ProductActive, Prices: schema.Prices{"USD": 1999}}
}

// outbox returns the changes of a log still in the outbox, in version order.
func outbox(t *testing.T, db *store.DB, log store.LogRef) []*schema.Change {
	t.Helper()
	rows, err := db.OutboxRows(context.Background(), log.ID, 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	var out []*schema.Change
	for _, r := range rows {
		c, err := schema.DecodeChange(r.Body)
		if err != nil {
			t.Fatal(err)
		}
		if c.Version != r.Version || c.TxnFirst != r.TxnFirst || c.TxnLast != r.TxnLast || c.Key() != r.Key {
			t.Fatalf("row and body disagree: %+v vs %+v", r, c)
		}
		out = append(out, c)
	}
	return out
}

func TestWritesTakeConsecutiveVersions(t *testing.T) {
	ctx := context.Background()
	db, _ := storetest.Open(t, store.Config{})
	tn := storetest.Tenant(t, db, "shop")
	log, err := db.LogBySlug(ctx, "shop")
	if err != nil {
		t.Fatal(err)
	}

	// One transaction, two entities: two consecutive versions, one transaction range.
	commits, err := db.WriteTx(ctx, func(tx *store.Tx) error {
		if err := tx.CreateProduct(ctx, tn, product("a")); err != nil {
			return err
		}
		return tx.CreateProduct(ctx, tn, product("b"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(commits) != 1 || commits[0].Log != "shop" || commits[0].Version != 2 {
		t.Fatalf("commits = %+v, want shop@2", commits)
	}
	// Unpublishing moves the product from pub to priv: a pub tombstone then the priv state.
	_, err = db.WriteTx(ctx, func(tx *store.Tx) error {
		old, err := tx.Product(ctx, tn, 1)
		if err != nil {
			return err
		}
		p := *old
		p.Status = schema.ProductDraft
		return tx.UpdateProduct(ctx, tn, old, &p)
	})
	if err != nil {
		t.Fatal(err)
	}
	got := outbox(t, db, log)
	type row struct {
		version, first, last int64
		key                  string
		deleted              bool
	}
	want := []row{
		{1, 1, 2, "pub.product.1", false},
		{2, 1, 2, "pub.product.2", false},
		{3, 3, 4, "pub.product.1", true},
		{4, 3, 4, "priv.product.1", false},
	}
	if len(got) != len(want) {
		t.Fatalf("outbox has %d rows, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if (row{g.Version, g.TxnFirst, g.TxnLast, g.Key(), g.Deleted}) != w {
			t.Errorf("row %d = %+v, want %+v", i, row{g.Version, g.TxnFirst, g.TxnLast, g.Key(), g.Deleted}, w)
		}
	}
	// The entity's version is the last version of its changes, in the row and in the data.
	var p schema.Product
	if err := json.Unmarshal(got[3].Data, &p); err != nil {
		t.Fatal(err)
	}
	if p.Version != 4 {
		t.Errorf("entity version %d, want 4", p.Version)
	}
}

func TestConflictsAndValidation(t *testing.T) {
	ctx := context.Background()
	db, _ := storetest.Open(t, store.Config{})
	tn := storetest.Tenant(t, db, "shop")
	create := func(p *schema.Product) error {
		return db.Tx(ctx, func(tx *store.Tx) error { return tx.CreateProduct(ctx, tn, p) })
	}
	if err := create(product("a")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		p    *schema.Product
		code schema.Code
	}{
		{"duplicate slug", product("a"), schema.CodeConflict},
		{"reserved slug", product("featured"), schema.CodeInvalid},
		{"bad slug", product("Not A Slug"), schema.CodeInvalid},
		{"unknown category", &schema.Product{Slug: "c", Title: "c", Status: schema.ProductActive, Prices: schema.Prices{"USD": 1}, CategoryIDs: []schema.CategoryID{99}}, schema.CodeInvalid},
		{"negative price", &schema.Product{Slug: "d", Title: "d", Status: schema.ProductActive, Prices: schema.Prices{"USD": -1}}, schema.CodeInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := create(tt.p)
			if got := schema.ErrorCode(err); got != tt.code {
				t.Fatalf("error %v has code %s, want %s", err, got, tt.code)
			}
		})
	}
	// Nothing of the failed writes reached the outbox.
	log, _ := db.LogBySlug(ctx, "shop")
	if n := len(outbox(t, db, log)); n != 1 {
		t.Fatalf("outbox has %d rows, want 1", n)
	}
}

// Concurrent writers of one tenant all land, with distinct consecutive versions: the retry
// helper re-runs whole transactions on serialization failures.
func TestConcurrentWritersRetry(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	retries := 0
	db, _ := storetest.Open(t, store.Config{OnRetry: func() { mu.Lock(); retries++; mu.Unlock() }, MaxRetries: 100, RetryBudget: 60e9})
	tn := storetest.Tenant(t, db, "shop")
	if err := db.Tx(ctx, func(tx *store.Tx) error { return tx.CreateProduct(ctx, tn, product("p")) }); err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				_, err := db.WriteTx(ctx, func(tx *store.Tx) error {
					old, err := tx.Product(ctx, tn, 1)
					if err != nil {
						return err
					}
					p := *old
					p.Prices = schema.Prices{"USD": old.Prices["USD"] + 1}
					return tx.UpdateProduct(ctx, tn, old, &p)
				})
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var final *schema.Product
	if err := db.Tx(ctx, func(tx *store.Tx) error {
		var err error
		final, err = tx.Product(ctx, tn, 1)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got, want := final.Prices["USD"], int64(1999+writers*each); got != want {
		t.Fatalf("price %d, want %d: a write was lost", got, want)
	}
	if final.Version != int64(1+writers*each) {
		t.Fatalf("version %d, want %d", final.Version, 1+writers*each)
	}
	t.Logf("%d retries for %d contended writes", retries, writers*each)
}

func TestSnapshotMatchesOutbox(t *testing.T) {
	ctx := context.Background()
	db, _ := storetest.Open(t, store.Config{})
	tn := storetest.Tenant(t, db, "shop")
	_, err := db.WriteTx(ctx, func(tx *store.Tx) error {
		c := &schema.Category{Slug: "shirts", Name: "Shirts"}
		if err := tx.CreateCategory(ctx, tn, c); err != nil {
			return err
		}
		p := product("tee")
		p.CategoryIDs = []schema.CategoryID{c.ID}
		if err := tx.CreateProduct(ctx, tn, p); err != nil {
			return err
		}
		v := &store.StockedVariant{Variant: schema.Variant{ProductID: p.ID, SKU: "TEE-M", Options: []schema.Option{{Name: "size", Value: "M"}}}, Stock: 3}
		if err := tx.CreateVariant(ctx, tn, v); err != nil {
			return err
		}
		post := &schema.Post{Title: "Hello", Content: "World", Status: schema.StatusPublish, Password: "secret",
			CommentStatus: "open", PingStatus: "open", Format: "standard", DateGMT: tx.Now(), ModifiedGMT: tx.Now()}
		return tx.CreatePost(ctx, tn, post)
	})
	if err != nil {
		t.Fatal(err)
	}
	log, _ := db.LogBySlug(ctx, "shop")
	// The latest state of each subject in the outbox equals the snapshot's, byte for byte.
	latest := map[string]*schema.Change{}
	for _, c := range outbox(t, db, log) {
		latest[c.Key()] = c
	}
	n := 0
	_, err = db.Snapshot(ctx, log, func(c schema.Change) error {
		n++
		o := latest[c.Key()]
		if o == nil || o.Deleted {
			t.Errorf("snapshot has %s, outbox does not", c.Key())
			return nil
		}
		if string(o.Data) != string(c.Data) {
			t.Errorf("%s differs:\noutbox   %s\nsnapshot %s", c.Key(), o.Data, c.Data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != len(latest) {
		t.Errorf("snapshot has %d states, outbox %d subjects", n, len(latest))
	}
	// The protected post's public copy withholds its content.
	var pubPost schema.Post
	json.Unmarshal(latest["pub.post.1"].Data, &pubPost)
	if pubPost.Content != "" || pubPost.Password != "" || !pubPost.Protected {
		t.Errorf("public copy of a protected post leaks: %+v", pubPost)
	}
	// The variant's stock never leaves the database; its availability does.
	if s := string(latest["pub.variant.3"].Data); !json.Valid([]byte(s)) || strings.Contains(s, `"stock"`) || !strings.Contains(s, `"low_stock"`) {
		t.Errorf("variant change = %s", s)
	}
}

func TestLeaseFencing(t *testing.T) {
	ctx := context.Background()
	db, _ := storetest.Open(t, store.Config{})
	a, err := db.AcquireLease(ctx, "relay", "a", 200e6)
	if err != nil || a == 0 {
		t.Fatalf("a acquire: %d %v", a, err)
	}
	if b, _ := db.AcquireLease(ctx, "relay", "b", 200e6); b != 0 {
		t.Fatalf("b took a held lease (token %d)", b)
	}
	if err := db.ReleaseLease(ctx, "relay", "a", a); err != nil {
		t.Fatal(err)
	}
	b, err := db.AcquireLease(ctx, "relay", "b", 200e6)
	if err != nil || b <= a {
		t.Fatalf("b acquire after release: token %d (a had %d), %v", b, a, err)
	}
	if ok, _ := db.RenewLease(ctx, "relay", "a", a, 200e6); ok {
		t.Fatal("a renewed a lease b holds")
	}
	if _, err := db.Epoch(ctx); err != nil {
		t.Fatal(err)
	}
}

// Dates given in another zone, with nanoseconds, are stored and replicated identically.
func TestPostDatesNormalized(t *testing.T) {
	ctx := context.Background()
	db, _ := storetest.Open(t, store.Config{})
	tn := storetest.Tenant(t, db, "shop")
	paris, _ := time.LoadLocation("Europe/Paris")
	when := time.Date(2025, 1, 2, 3, 4, 5, 123456789, paris)
	if err := db.Tx(ctx, func(tx *store.Tx) error {
		return tx.CreatePost(ctx, tn, &schema.Post{Slug: "p", Title: "T", Status: schema.StatusPublish, CommentStatus: "open",
			PingStatus: "open", Format: "standard", DateGMT: when, ModifiedGMT: when})
	}); err != nil {
		t.Fatal(err)
	}
	log, _ := db.LogBySlug(ctx, "shop")
	got := outbox(t, db, log)
	var snap []byte
	db.Snapshot(ctx, log, func(c schema.Change) error { snap = c.Data; return nil })
	if string(got[len(got)-1].Data) != string(snap) {
		t.Fatalf("outbox %s\nsnapshot %s", got[len(got)-1].Data, snap)
	}
}

// A product keeps the id of a deleted category, and can still be updated.
func TestUpdateAfterCategoryDeletion(t *testing.T) {
	ctx := context.Background()
	db, _ := storetest.Open(t, store.Config{})
	tn := storetest.Tenant(t, db, "shop")
	var cat schema.CategoryID
	var pid schema.ProductID
	if err := db.Tx(ctx, func(tx *store.Tx) error {
		c := &schema.Category{Slug: "gone", Name: "Gone"}
		if err := tx.CreateCategory(ctx, tn, c); err != nil {
			return err
		}
		p := product("kept")
		p.CategoryIDs = []schema.CategoryID{c.ID}
		cat, pid = c.ID, p.ID
		err := tx.CreateProduct(ctx, tn, p)
		pid = p.ID
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Tx(ctx, func(tx *store.Tx) error { return tx.DeleteCategory(ctx, tn, cat) }); err != nil {
		t.Fatal(err)
	}
	err := db.Tx(ctx, func(tx *store.Tx) error {
		old, err := tx.Product(ctx, tn, pid)
		if err != nil {
			return err
		}
		p := *old
		p.Title = "Renamed"
		return tx.UpdateProduct(ctx, tn, old, &p)
	})
	if err != nil {
		t.Fatalf("update of a product whose category was deleted: %v", err)
	}
	// Adding an unknown category is still refused.
	err = db.Tx(ctx, func(tx *store.Tx) error {
		old, _ := tx.Product(ctx, tn, pid)
		p := *old
		p.CategoryIDs = append(p.CategoryIDs, 9999)
		return tx.UpdateProduct(ctx, tn, old, &p)
	})
	if schema.ErrorCode(err) != schema.CodeInvalid {
		t.Fatalf("unknown category added: %v", err)
	}
}
