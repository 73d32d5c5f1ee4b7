package shopify

import (
	"bytes"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"vitrine/schema"
)

// decoded is what decoding a file gives, without a database: the plans by handle, in order, and
// every reject by line.
type decoded struct {
	plans   []*plan
	bySlug  map[string]*plan
	rejects map[int]string // line → reason
	groups  map[int]string // line → handle of a rejected group's row
}

func decodeAll(t testing.TB, data []byte, currency string, exponent int) (*decoded, error) {
	t.Helper()
	d, err := newDecoder(bytes.NewReader(data), currency, exponent)
	if err != nil {
		return nil, err
	}
	out := &decoded{bySlug: map[string]*plan{}, rejects: map[int]string{}, groups: map[int]string{}}
	take := func() {
		for _, r := range d.rejects {
			out.rejects[r.row.line] = r.reason
		}
		d.rejects = d.rejects[:0]
	}
	for {
		g, err := d.nextGroup()
		take()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		p, rerr := d.plan(g)
		if rerr != nil {
			for _, r := range g.rows {
				out.groups[r.line] = g.handle
			}
			out.rejects[rerr.line] = rerr.reason
			continue
		}
		out.plans = append(out.plans, p)
		out.bySlug[p.product.Slug] = p
	}
}

func readFixture(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/products.csv")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const cdn = "https://cdn.shopify.com/s/files/1/0612/3456/7890/files/"

type wantVariant struct {
	sku     string
	options string // "Color=Black,Size=S"
	price   int64
	stock   int64
}

func optionString(opts []schema.Option) string {
	var parts []string
	for _, o := range opts {
		parts = append(parts, o.Name+"="+o.Value)
	}
	return strings.Join(parts, ",")
}

// The fixture is a Shopify export: every product's mapping, as a table.
func TestDecodeFixture(t *testing.T) {
	got, err := decodeAll(t, readFixture(t), "USD", 2)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		slug        string
		title       string
		status      schema.ProductStatus
		description string // a prefix
		price       int64
		images      []string // URLs after the CDN prefix, in order
		alts        []string
		categories  []string // slugs created when missing, parents first
		leaves      []string
		variants    []wantVariant
		warnings    int
	}{
		{
			slug: "classic-tee", title: "Classic Tee", status: schema.ProductActive,
			description: "<p>Our heaviest tee, in 240 g/m² \"ring-spun\" cotton.</p>\n<ul>\n<li>Relaxed fit</li>", price: 2500,
			images:     []string{"tee-black.jpg?v=1700000001", "tee-white.jpg?v=1700000002", "tee-back.jpg?v=1700000003"},
			alts:       []string{"Classic Tee in black", "Classic Tee in white", "Back print"},
			categories: []string{"apparel-accessories", "apparel-accessories-clothing", "apparel-accessories-clothing-shirts-tops", "t-shirts"},
			leaves:     []string{"apparel-accessories-clothing-shirts-tops", "t-shirts"},
			variants: []wantVariant{
				{"TEE-BLK-S", "Color=Black,Size=S", 2500, 12},
				{"TEE-BLK-M", "Color=Black,Size=M", 2500, 0}, // -3 in the file: a warning
				{"TEE-WHT-S", "Color=White,Size=S", 2750, 5},
				{"TEE-WHT-M", "Color=White,Size=M", 2750, 0},
			},
			warnings: 1,
		},
		{
			slug: "canvas-tote", title: "Canvas Tote", status: schema.ProductActive, description: "<p>Heavy canvas", price: 1800,
			images: []string{"tote.jpg?v=1700000004", "tote-inside.jpg?v=1700000005"}, alts: []string{"Canvas Tote", "Inside pocket"},
			categories: []string{"bags"}, leaves: []string{"bags"},
			variants: []wantVariant{{"TOTE-01", "", 1800, 40}},
		},
		{
			slug: "winter-beanie", title: "Winter Beanie", status: schema.ProductDraft, description: "<p>Merino &amp; cashmere.</p>", price: 1500,
			images: []string{"beanie.jpg?v=1700000006"}, alts: []string{""},
			categories: []string{"apparel-accessories", "apparel-accessories-clothing-accessories", "apparel-accessories-clothing-accessories-hats", "hats"},
			leaves:     []string{"apparel-accessories-clothing-accessories-hats", "hats"},
			variants:   []wantVariant{{"", "Color=Red", 1500, 7}, {"", "Color=Navy", 1500, 3}},
		},
		{
			slug: "wool-socks", title: "Wool Socks", status: schema.ProductDraft, description: "Plain text, no HTML.", price: 950,
			categories: []string{"socks"}, leaves: []string{"socks"},
			variants: []wantVariant{{"SOCK-SM", "Size=S-M", 950, 30}, {"SOCK-LXL", "Size=L-XL", 950, 25}},
		},
		{
			slug: "archived-poster", title: "Mountain Poster (A2)", status: schema.ProductArchived, description: "<p>Giclée print.</p>", price: 4000,
			images: []string{"poster.jpg?v=1700000007"}, alts: []string{"Mountain poster"},
			categories: []string{"posters"}, leaves: []string{"posters"},
			variants: []wantVariant{{"POSTER-A2", "", 4000, 2}},
		},
	}
	var order []string
	for _, p := range got.plans {
		order = append(order, p.product.Slug)
	}
	if want := []string{"classic-tee", "canvas-tote", "winter-beanie", "wool-socks", "archived-poster"}; !slices.Equal(order, want) {
		t.Fatalf("products = %q, want %q", order, want)
	}
	for _, tc := range tests {
		t.Run(tc.slug, func(t *testing.T) {
			p := got.bySlug[tc.slug]
			if p.product.Title != tc.title || p.product.Status != tc.status {
				t.Errorf("title, status = %q, %s; want %q, %s", p.product.Title, p.product.Status, tc.title, tc.status)
			}
			if !strings.HasPrefix(p.product.Description, tc.description) {
				t.Errorf("description = %q, want it to start with %q", p.product.Description, tc.description)
			}
			if got := p.product.Prices; len(got) != 1 || got["USD"] != tc.price {
				t.Errorf("prices = %v, want USD %d", got, tc.price)
			}
			var urls, alts []string
			for _, im := range p.product.Images {
				urls = append(urls, strings.TrimPrefix(im.URL, cdn))
				alts = append(alts, im.Alt)
			}
			if !slices.Equal(urls, tc.images) || !slices.Equal(alts, tc.alts) {
				t.Errorf("images = %q %q, want %q %q", urls, alts, tc.images, tc.alts)
			}
			var cats []string
			for _, c := range p.categories {
				cats = append(cats, c.slug)
			}
			if !slices.Equal(cats, tc.categories) || !slices.Equal(p.leafSlugs, tc.leaves) {
				t.Errorf("categories = %q, leaves %q; want %q, %q", cats, p.leafSlugs, tc.categories, tc.leaves)
			}
			var vs []wantVariant
			for _, v := range p.variants {
				vs = append(vs, wantVariant{v.sku, optionString(v.options), v.price, v.stock})
			}
			if !slices.Equal(vs, tc.variants) {
				t.Errorf("variants = %+v\nwant       %+v", vs, tc.variants)
			}
			if len(p.warnings) != tc.warnings {
				t.Errorf("warnings = %+v, want %d", p.warnings, tc.warnings)
			}
		})
	}
	// The nested categories name their parents.
	tee := got.bySlug["classic-tee"]
	if c := tee.categories[2]; c.name != "Shirts & Tops" || c.parent != "apparel-accessories-clothing" {
		t.Errorf("leaf category = %+v", c)
	}
	if v := tee.variants[2]; v.title != "White / S" {
		t.Errorf("variant title = %q, want \"White / S\"", v.title)
	}
	if w := tee.warnings[0]; w.Line != 7 || !strings.Contains(w.Message, "-3 is negative") {
		t.Errorf("warning = %+v", w)
	}

	wantRejects := map[int]string{
		18: `Variant Price "12.345" has more decimal places than USD allows (2)`,
		19: "Handle is empty",
		20: `Variant SKU "TEE-BLK-S" is also on line 2 (product "classic-tee")`,
		22: `Handle "featured" is reserved`,
	}
	if len(got.rejects) != len(wantRejects) {
		t.Errorf("rejects = %v, want %v", got.rejects, wantRejects)
	}
	for line, want := range wantRejects {
		if got.rejects[line] != want {
			t.Errorf("reject at line %d = %q, want %q", line, got.rejects[line], want)
		}
	}
	// The bad price rejects its product's first row too.
	if got.groups[17] != "bad-price-mug" || got.groups[18] != "bad-price-mug" {
		t.Errorf("rejected groups = %v, want lines 17 and 18 in bad-price-mug", got.groups)
	}
}

// The same file with a byte-order mark and CRLF line ends (as Excel saves it) decodes the same.
func TestDecodeBOMAndCRLF(t *testing.T) {
	plain, err := decodeAll(t, readFixture(t), "USD", 2)
	if err != nil {
		t.Fatal(err)
	}
	excel := append([]byte("\xEF\xBB\xBF"), bytes.ReplaceAll(readFixture(t), []byte("\n"), []byte("\r\n"))...)
	got, err := decodeAll(t, excel, "USD", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.plans) != len(plain.plans) || len(got.rejects) != len(plain.rejects) {
		t.Fatalf("got %d plans, %d rejects; want %d, %d", len(got.plans), len(got.rejects), len(plain.plans), len(plain.rejects))
	}
	// encoding/csv turns the CRLFs inside a quoted field into LFs.
	if a, b := got.bySlug["classic-tee"].product.Description, plain.bySlug["classic-tee"].product.Description; a != b {
		t.Errorf("description = %q, want %q", a, b)
	}
}

func TestParseHeader(t *testing.T) {
	tests := []struct {
		name   string
		header string
		err    string // substring; "" for success
		check  func(*header) bool
	}{
		{"minimal", "Handle,Title,Variant Price", "", nil},
		{"any order and case", "variant price, TITLE ,handle", "", func(h *header) bool { return h.idx[fHandle] == 2 && h.idx[fPrice] == 0 }},
		{"BOM on the first name", "\uFEFFHandle,Title,Variant Price", "", func(h *header) bool { return h.idx[fHandle] == 0 }},
		{"unknown columns ignored", "Handle,Gift Card,Title,Google Shopping / Gender,Variant Price", "", func(h *header) bool { return h.idx[fTitle] == 2 }},
		{"newer Shopify names", "URL handle,Title,Description,SKU,Price,Inventory quantity,Product image URL,Variant image URL", "",
			func(h *header) bool {
				return h.has(fHandle) && h.has(fBody) && h.has(fSKU) && h.has(fPrice) && h.has(fQty) && h.has(fImageSrc) && h.has(fVariantImage)
			}},
		{"missing required", "Title,Body (HTML)", "missing required columns: Handle, Variant Price", nil},
		{"twice", "Handle,Title,Variant Price,handle", "column Handle appears twice (columns 1 and 4)", nil},
		{"option name without value", "Handle,Title,Variant Price,Option1 Name", "Option1 Name and Option1 Value come together", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, err := parseHeader(strings.Split(tc.header, ","))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrHeader) {
					t.Fatalf("parseHeader(%q) = %v, want an ErrHeader containing %q", tc.header, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseHeader(%q) = %v", tc.header, err)
			}
			if tc.check != nil && !tc.check(h) {
				t.Errorf("parseHeader(%q) = %+v", tc.header, h.idx)
			}
		})
	}
	if _, err := newDecoder(strings.NewReader(""), "USD", 2); !errors.Is(err, ErrHeader) {
		t.Errorf("empty file: %v, want ErrHeader", err)
	}
}

func TestParseMinor(t *testing.T) {
	tests := []struct {
		in   string
		exp  int
		want int64
		err  string
	}{
		{"19.99", 2, 1999, ""},
		{"20", 2, 2000, ""},
		{"0.5", 2, 50, ""},
		{"0", 2, 0, ""},
		{"007.10", 2, 710, ""},
		{"12.340", 2, 1234, ""},
		{"1500.00", 0, 1500, ""},
		{"0.005", 3, 5, ""},
		{"1.2345", 4, 12345, ""},
		{"12.345", 2, 0, "more decimal places than USD allows (2)"},
		{"1500.50", 0, 0, "more decimal places than USD allows (0)"},
		{"-1.00", 2, 0, "not a decimal number"},
		{"+1.00", 2, 0, "not a decimal number"},
		{"1e3", 2, 0, "not a decimal number"},
		{"1,000.00", 2, 0, "not a decimal number"},
		{"$5", 2, 0, "not a decimal number"},
		{".5", 2, 0, "not a decimal number"},
		{"5.", 2, 0, "not a decimal number"},
		{"", 2, 0, "not a decimal number"},
		{"10000000000000", 2, schema.MaxMinorAmount, ""},
		{"10000000000000.01", 2, 0, "too large"},
		{"99999999999999999999999", 0, 0, "too large"},
	}
	for _, tc := range tests {
		got, err := parseMinor(tc.in, "USD", tc.exp)
		if got != tc.want || (tc.err == "") != (err == "") || !strings.Contains(err, tc.err) {
			t.Errorf("parseMinor(%q, %d) = %d, %q; want %d, %q", tc.in, tc.exp, got, err, tc.want, tc.err)
		}
	}
}

// Small files, one behaviour each: the reason a group is rejected, or a property of its plan.
func TestDecodeCases(t *testing.T) {
	const head = "Handle,Title,Option1 Name,Option1 Value,Option2 Name,Option2 Value,Variant SKU,Variant Price,Variant Inventory Qty,Image Src,Image Position,Status,Published,Type\n"
	tests := []struct {
		name     string
		rows     string
		exponent int
		reject   string // substring of the reason at rejectAt; "" when the file decodes
		rejectAt int
		check    func(*decoded) string // "" when fine
	}{
		{name: "uppercase handle lowercased", rows: "Red-Shirt,Red Shirt,,,,,RS,10.00,,,,,,\n",
			check: func(d *decoded) string { return wantSlug(d, "red-shirt") }},
		{name: "default title is no options", rows: "a,A,Title,Default Title,,,A1,1.00,,,,,,\n",
			check: func(d *decoded) string {
				if v := d.bySlug["a"].variants; len(v) != 1 || len(v[0].options) != 0 {
					return "want one variant without options"
				}
				return ""
			}},
		{name: "no option columns: one variant", rows: "a,A,,,,,A1,1.00,,,,,,\na,,,,,,A2,1.00,,,,,,\n",
			reject: "a product without options has one variant; line 2 is already it", rejectAt: 3},
		{name: "not contiguous", rows: "a,A,,,,,A1,1.00,,,,,,\nb,B,,,,,B1,1.00,,,,,,\na,A,,,,,A2,1.00,,,,,,\n",
			reject: `Handle "a" already appeared at line 2`, rejectAt: 4},
		{name: "short row", rows: "a,A,,,,,A1,1.00\n", reject: "the row has 8 fields; the header has 14", rejectAt: 2},
		{name: "empty title", rows: "a,,,,,,A1,1.00,,,,,,\n", reject: "Title is empty", rejectAt: 2},
		{name: "bad slug", rows: "a_b,A,,,,,A1,1.00,,,,,,\n", reject: `Handle may contain only a-z, 0-9 and hyphens ("a_b")`, rejectAt: 2},
		{name: "empty option value", rows: "a,A,Size,S,Color,Red,A1,1.00,,,,,,\na,,,M,,,A2,1.00,,,,,,\n",
			reject: `Option2 Value is empty (Option2 Name is "Color")`, rejectAt: 3},
		{name: "value without name", rows: "a,A,Size,S,,Red,A1,1.00,,,,,,\n", reject: `Option2 Value "Red" has no Option2 Name`, rejectAt: 2},
		{name: "continuation names another option", rows: "a,A,Size,S,,,A1,1.00,,,,,,\na,,Colour,M,,,A2,1.00,,,,,,\n",
			reject: `Option1 Name "Colour" differs from the product's ("Size" on line 2)`, rejectAt: 3},
		{name: "same options twice", rows: "a,A,Size,S,,,A1,1.00,,,,,,\na,,,S,,,A2,1.00,,,,,,\n",
			reject: `options "S" repeat those of line 2`, rejectAt: 3},
		{name: "SKU twice in a product", rows: "a,A,Size,S,,,A1,1.00,,,,,,\na,,,M,,,A1,1.00,,,,,,\n",
			reject: `Variant SKU "A1" is also on line 2`, rejectAt: 3},
		{name: "SKU with a space", rows: "a,A,,,,,A 1,1.00,,,,,,\n", reject: "Variant SKU: sku must not contain spaces", rejectAt: 2},
		{name: "empty price", rows: "a,A,,,,,A1,,,,,,,\n", reject: "Variant Price is empty", rejectAt: 2},
		{name: "stock not an integer", rows: "a,A,,,,,A1,1.00,2.5,,,,,\n", reject: `Variant Inventory Qty "2.5" is not an integer`, rejectAt: 2},
		{name: "stock too large", rows: "a,A,,,,,A1,1.00,2000000000,,,,,\n", reject: "out of range", rejectAt: 2},
		{name: "relative image", rows: "a,A,,,,,A1,1.00,,/files/a.jpg,1,,,\n", reject: `Image Src "/files/a.jpg" is not an absolute http(s) URL`, rejectAt: 2},
		{name: "bad image position", rows: "a,A,,,,,A1,1.00,,https://x.test/a.jpg,first,,,\n", reject: `Image Position "first"`, rejectAt: 2},
		{name: "position without image", rows: "a,A,,,,,A1,1.00,,,1,,,\n", reject: "without an Image Src", rejectAt: 2},
		{name: "bad status", rows: "a,A,,,,,A1,1.00,,,,published,,\n", reject: `Status "published" is not active, draft or archived`, rejectAt: 2},
		{name: "bad published", rows: "a,A,,,,,A1,1.00,,,,,yes,\n", reject: `Published "yes" is not TRUE or FALSE`, rejectAt: 2},
		{name: "images ordered by position", rows: "a,A,,,,,A1,1.00,,https://x.test/2.jpg,2,,,\na,,,,,,,,,https://x.test/1.jpg,1,,,\na,,,,,,,,,https://x.test/n.jpg,,,,\n",
			check: func(d *decoded) string {
				var got []string
				for _, im := range d.bySlug["a"].product.Images {
					got = append(got, im.URL)
				}
				if !slices.Equal(got, []string{"https://x.test/1.jpg", "https://x.test/2.jpg", "https://x.test/n.jpg"}) {
					return "images in order " + strings.Join(got, " ")
				}
				return ""
			}},
		{name: "too many images kept to the limit", rows: manyImages(schema.MaxImages + 5),
			check: func(d *decoded) string {
				p := d.bySlug["a"]
				if len(p.product.Images) != schema.MaxImages || len(p.warnings) != 1 {
					return "want the images cut to the limit with a warning"
				}
				return ""
			}},
		{name: "published false makes a draft", rows: "a,A,,,,,A1,1.00,,,,active,FALSE,\n",
			check: func(d *decoded) string { return wantStatus(d, "a", schema.ProductDraft) }},
		{name: "archived stays archived", rows: "a,A,,,,,A1,1.00,,,,archived,false,\n",
			check: func(d *decoded) string { return wantStatus(d, "a", schema.ProductArchived) }},
		{name: "no status is active", rows: "a,A,,,,,A1,1.00,,,,,,\n",
			check: func(d *decoded) string { return wantStatus(d, "a", schema.ProductActive) }},
		{name: "zero-decimal currency", exponent: -1, rows: "a,A,,,,,A1,1500.00,,,,,,\n",
			check: func(d *decoded) string {
				if d.bySlug["a"].product.Prices["USD"] != 1500 {
					return "want 1500 minor units"
				}
				return ""
			}},
		{name: "type without slug characters", rows: "a,A,,,,,A1,1.00,,,,,,靴\n",
			check: func(d *decoded) string {
				if p := d.bySlug["a"]; len(p.categories) != 0 || len(p.warnings) != 1 {
					return "want no category and a warning"
				}
				return ""
			}},
		{name: "blank rows skipped", rows: ",,,,,,,,,,,,,\na,A,,,,,A1,1.00,,,,,,\n,,,,,,,,,,,,,\n",
			check: func(d *decoded) string { return wantSlug(d, "a") }},
		{name: "unreadable row alone", rows: "a,A,,,,,A1,1.00,,,,,,\nb,B \"x\",,,,,B1,1.00,,,,,,\nc,C,,,,,C1,1.00,,,,,,\n",
			reject: "unreadable CSV", rejectAt: 3,
			check: func(d *decoded) string {
				if d.bySlug["a"] == nil || d.bySlug["c"] == nil {
					return "want a and c imported"
				}
				return ""
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			exp := 2
			if tc.exponent < 0 {
				exp = 0
			}
			got, err := decodeAll(t, []byte(head+tc.rows), "USD", exp)
			if err != nil {
				t.Fatal(err)
			}
			if tc.reject != "" {
				if r := got.rejects[tc.rejectAt]; !strings.Contains(r, tc.reject) {
					t.Errorf("reject at line %d = %q, want it to contain %q (all: %v)", tc.rejectAt, r, tc.reject, got.rejects)
				}
			} else if len(got.rejects) > 0 {
				t.Errorf("rejects = %v, want none", got.rejects)
			}
			if tc.check != nil {
				if msg := tc.check(got); msg != "" {
					t.Error(msg)
				}
			}
		})
	}
}

func wantSlug(d *decoded, slug string) string {
	if len(d.plans) != 1 || d.plans[0].product.Slug != slug {
		return "want one product " + slug
	}
	return ""
}

func wantStatus(d *decoded, slug string, st schema.ProductStatus) string {
	if p := d.bySlug[slug]; p == nil || p.product.Status != st {
		return "want status " + string(st)
	}
	return ""
}

func manyImages(n int) string {
	var b strings.Builder
	b.WriteString("a,A,,,,,A1,1.00,,,,,,\n")
	for i := range n {
		b.WriteString("a,,,,,,,,,https://x.test/" + strings.Repeat("i", i+1) + ".jpg,,,,\n")
	}
	return b.String()
}
