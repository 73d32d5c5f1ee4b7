package cache_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// words feeds the generated product texts. A storefront's catalogue repeats its vocabulary a
// lot (brand, materials, sizes), which is what makes JSON compress well; a handful of words
// keeps that property without pretending to be a real catalogue.
var words = strings.Fields(`organic cotton linen merino wool classic slim relaxed fit crew neck
	v-neck cardigan jacket trousers shorts dress shirt tee hoodie sweater knit woven recycled
	navy black white olive sand charcoal rust indigo cream striped plain washed heavyweight
	lightweight summer winter everyday essential limited edition handmade ethically sourced
	Portugal Italy Japan small medium large pocket button zip hem sleeve collar`)

type money struct {
	Amount    int64  `json:"amount"`
	Currency  string `json:"currency"`
	Formatted string `json:"formatted"`
}

type image struct {
	URL    string `json:"url"`
	Alt    string `json:"alt"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
}

type categoryRef struct {
	ID   int64  `json:"id"`
	Slug string `json:"slug"`
	Name string `json:"name"`
}

type product struct {
	ID          int64         `json:"id"`
	Slug        string        `json:"slug"`
	Title       string        `json:"title"`
	Description string        `json:"description"`
	Featured    bool          `json:"featured"`
	Price       money         `json:"price"`
	Stock       int           `json:"stock"`
	Images      []image       `json:"images"`
	Categories  []categoryRef `json:"categories"`
	UpdatedAt   string        `json:"updated_at"`
}

func phrase(r *rand.Rand, n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = words[r.IntN(len(words))]
	}
	return strings.Join(parts, " ")
}

// productsJSON renders a JSON array of product-like objects at least size bytes long, the shape
// of a storefront's product list. It is deterministic.
func productsJSON(size int) []byte {
	r := rand.New(rand.NewPCG(1, uint64(size)))
	var list []product
	for id := int64(1000); ; id++ {
		title := phrase(r, 3+r.IntN(3))
		slug := strings.ReplaceAll(title, " ", "-") + fmt.Sprintf("-%d", id)
		amount := int64(1000 + r.IntN(20000))
		p := product{
			ID:          id,
			Slug:        slug,
			Title:       title,
			Description: phrase(r, 12+r.IntN(20)),
			Featured:    r.IntN(5) == 0,
			Price:       money{Amount: amount, Currency: "EUR", Formatted: fmt.Sprintf("%d.%02d", amount/100, amount%100)},
			Stock:       r.IntN(200),
			UpdatedAt:   fmt.Sprintf("2025-%02d-%02dT%02d:%02d:%02dZ", 1+r.IntN(12), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60)),
		}
		for i := range 1 + r.IntN(3) {
			p.Images = append(p.Images, image{
				URL:    fmt.Sprintf("https://cdn.example.com/t/42/products/%d/%d-%x.jpg", id, i, r.Uint32()),
				Alt:    title,
				Width:  1200,
				Height: 1600,
			})
		}
		for range 1 + r.IntN(2) {
			c := r.IntN(12)
			p.Categories = append(p.Categories, categoryRef{ID: int64(c + 1), Slug: words[c], Name: strings.ToUpper(words[c][:1]) + words[c][1:]})
		}
		list = append(list, p)
		b, err := json.Marshal(list)
		if err != nil {
			panic(err)
		}
		if len(b) >= size {
			return b
		}
	}
}
