package agents

import (
	"encoding/json"
	"html"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"vitrine/schema"
)

// Categories of the built-in abilities.
var builtinCategories = []Category{
	{Slug: "content", Label: "Content", Description: "The store's posts and pages: find, read, draft and revise them."},
	{Slug: "commerce", Label: "Commerce", Description: "The store's catalog and orders: search products, set prices and stock, see what awaits fulfilment."},
}

// Builtin returns the registry of Vitrine's own abilities (namespace "vitrine"). Each runs as its
// user through the origin's routes (Run): CMS posts for content, the storefront search and the
// staff admin API for commerce.
func Builtin() (*Registry, error) {
	return NewRegistry(builtinCategories, []*Ability{
		searchContent(), getPost(), createDraftPost(), updateDraftPost(), trashDraftPost(),
		searchProducts(), updateProductPrice(), updateProductStock(), listOrdersAwaitingFulfilment(),
	})
}

var (
	readonly = Annotations{Readonly: true, Idempotent: true}
	additive = Annotations{}
	update   = Annotations{Idempotent: true}
	removal  = Annotations{Destructive: true, Idempotent: true}
)

// decode decodes an input that passed its schema.
func decode(in json.RawMessage, v any) error {
	if err := json.Unmarshal(in, v); err != nil {
		return &schema.Error{Code: schema.CodeInvalid, CMSCode: "ability_invalid_input", Message: "input: " + err.Error()}
	}
	return nil
}

// --- content ---------------------------------------------------------------------------------

// cmsPost is what the content abilities read of a CMS post or page.
type cmsPost struct {
	ID       int64    `json:"id"`
	Type     string   `json:"type"`
	Status   string   `json:"status"`
	Link     string   `json:"link"`
	Date     string   `json:"date"`
	Modified string   `json:"modified"`
	Author   int64    `json:"author"`
	Title    rendered `json:"title"`
	Content  rendered `json:"content"`
	Excerpt  rendered `json:"excerpt"`
}

type rendered struct {
	Raw      *string `json:"raw"`
	Rendered string  `json:"rendered"`
}

// text is the raw value when the answer had it (context=edit), else the rendered HTML as text.
func (r rendered) text() string {
	if r.Raw != nil {
		return *r.Raw
	}
	return plainText(r.Rendered)
}

var tags = regexp.MustCompile(`<[^>]*>`)

// plainText turns rendered HTML into text: tags dropped, entities decoded, spaces collapsed.
func plainText(h string) string {
	return strings.Join(strings.Fields(html.UnescapeString(tags.ReplaceAllString(h, " "))), " ")
}

// postItem is a post in the content abilities' outputs.
type postItem struct {
	ID       int64  `json:"id"`
	Type     string `json:"type"`
	Status   string `json:"status"`
	Title    string `json:"title"`
	Excerpt  string `json:"excerpt"`
	Link     string `json:"link"`
	Date     string `json:"date"`
	Modified string `json:"modified"`
}

func itemOf(p *cmsPost) postItem {
	return postItem{ID: p.ID, Type: p.Type, Status: p.Status, Title: plainText(p.Title.Rendered), Excerpt: plainText(p.Excerpt.Rendered),
		Link: p.Link, Date: p.Date, Modified: p.Modified}
}

const postItemSchema = `{"type": "object",
	"properties": {
		"id": {"type": "integer"}, "type": {"type": "string"}, "status": {"type": "string"},
		"title": {"type": "string"}, "excerpt": {"type": "string"}, "link": {"type": "string"},
		"date": {"type": "string"}, "modified": {"type": "string"}
	},
	"required": ["id", "type", "status", "title", "link"]}`

// collection is the rest base of a post type the content abilities address.
func collection(typ string) string {
	if typ == "page" {
		return "/cms/v2/pages"
	}
	return "/cms/v2/posts"
}

func searchContent() *Ability {
	return &Ability{
		Name: "vitrine/search-content", Label: "Search content", Category: "content", Cap: schema.CapRead, Annotations: readonly,
		Description: "Finds the store's posts and pages whose title, content or excerpt match words, newest first. " +
			"Published content by default; drafts and other statuses need the capability to edit them.",
		Input: `{"type": "object",
			"properties": {
				"search": {"type": "string", "minLength": 1, "maxLength": 200, "description": "The words to look for."},
				"type": {"type": "string", "enum": ["post", "page", "any"], "default": "any", "description": "Posts, pages or both."},
				"status": {"type": "string", "enum": ["publish", "future", "draft", "pending", "private", "any"], "default": "publish",
					"description": "Which statuses to search; any: every status the user may read."},
				"per_page": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10, "description": "The most results returned."}
			},
			"required": ["search"], "additionalProperties": false}`,
		Output: `{"type": "object",
			"properties": {
				"total": {"type": "integer", "minimum": 0, "description": "How many posts and pages match in all."},
				"results": {"type": "array", "items": ` + postItemSchema + `}
			},
			"required": ["total", "results"]}`,
		Run: func(r *Run, raw json.RawMessage) (any, error) {
			in := struct {
				Search  string `json:"search"`
				Type    string `json:"type"`
				Status  string `json:"status"`
				PerPage int    `json:"per_page"`
			}{Type: "any", Status: "publish", PerPage: 10}
			if err := decode(raw, &in); err != nil {
				return nil, err
			}
			typesOf := []string{in.Type}
			if in.Type == "any" {
				typesOf = []string{"post", "page"}
			}
			out := struct {
				Total   int        `json:"total"`
				Results []postItem `json:"results"`
			}{Results: []postItem{}}
			q := url.Values{"search": {in.Search}, "status": {in.Status}, "per_page": {strconv.Itoa(in.PerPage)},
				"_fields": {"id,type,status,link,date,modified,title,excerpt"}}
			for _, t := range typesOf {
				var page []*cmsPost
				total, err := r.CMSPage(collection(t)+"?"+q.Encode(), &page)
				if err != nil {
					return nil, err
				}
				out.Total += total
				for _, p := range page {
					out.Results = append(out.Results, itemOf(p))
				}
			}
			sort.SliceStable(out.Results, func(i, j int) bool { return out.Results[i].Date > out.Results[j].Date })
			if len(out.Results) > in.PerPage {
				out.Results = out.Results[:in.PerPage]
			}
			return out, nil
		},
	}
}

// postIDSchema is the id of the post an ability addresses.
const postIDSchema = `{"type": "integer", "minimum": 1, "maximum": 9007199254740991, "description": "The post's id."}`

// fullPost is a post in full, as get-post answers it.
type fullPost struct {
	postItem
	Content string `json:"content"`
	Author  int64  `json:"author"`
	// Format says whether title, content and excerpt are what was written (raw: the user may edit
	// the post) or the text of what readers see (rendered).
	Format string `json:"format"`
}

func getPost() *Ability {
	return &Ability{
		Name: "vitrine/get-post", Label: "Get a post", Category: "content", Cap: schema.CapRead, Annotations: readonly,
		Description: "Reads one post or page by id: its title, content and excerpt as written when the user may edit it, " +
			"else as readers see them.",
		Input: `{"type": "object",
			"properties": {
				"id": ` + postIDSchema + `,
				"type": {"type": "string", "enum": ["post", "page"], "default": "post", "description": "Whether the id is a post's or a page's."}
			},
			"required": ["id"], "additionalProperties": false}`,
		Output: `{"type": "object",
			"properties": {
				"id": {"type": "integer"}, "type": {"type": "string"}, "status": {"type": "string"},
				"title": {"type": "string"}, "excerpt": {"type": "string"}, "content": {"type": "string"},
				"link": {"type": "string"}, "date": {"type": "string"}, "modified": {"type": "string"},
				"author": {"type": "integer"}, "format": {"type": "string", "enum": ["raw", "rendered"]}
			},
			"required": ["id", "type", "status", "title", "content", "excerpt", "link", "format"]}`,
		Run: func(r *Run, raw json.RawMessage) (any, error) {
			in := struct {
				ID   int64  `json:"id"`
				Type string `json:"type"`
			}{Type: "post"}
			if err := decode(raw, &in); err != nil {
				return nil, err
			}
			base := collection(in.Type) + "/" + strconv.FormatInt(in.ID, 10)
			// As written (context=edit) when the user may edit the post, else as readers see it.
			var p cmsPost
			var err error = errNoEdit
			if r.User().Role.Can(schema.CapEditPosts) {
				err = r.CMS("GET", base+"?context=edit", nil, &p)
			}
			if schema.ErrorCode(err) == schema.CodeForbidden {
				p = cmsPost{}
				err = r.CMS("GET", base, nil, &p)
			}
			if err != nil {
				return nil, err
			}
			out := fullPost{postItem: itemOf(&p), Content: p.Content.text(), Author: p.Author, Format: "rendered"}
			if p.Title.Raw != nil {
				out.Title, out.Excerpt, out.Format = p.Title.text(), p.Excerpt.text(), "raw"
			}
			return out, nil
		},
	}
}

// errNoEdit marks a read made without the edit context.
var errNoEdit = &schema.Error{Code: schema.CodeForbidden}

// draftSchema is the output of the draft abilities.
const draftSchema = `{"type": "object",
	"properties": {
		"id": {"type": "integer"}, "status": {"type": "string"}, "title": {"type": "string"},
		"link": {"type": "string"}, "modified": {"type": "string"}
	},
	"required": ["id", "status", "title", "link"]}`

type draft struct {
	ID       int64  `json:"id"`
	Status   string `json:"status"`
	Title    string `json:"title"`
	Link     string `json:"link"`
	Modified string `json:"modified"`
}

func draftOf(p *cmsPost) draft {
	return draft{ID: p.ID, Status: p.Status, Title: p.Title.text(), Link: p.Link, Modified: p.Modified}
}

func createDraftPost() *Ability {
	return &Ability{
		Name: "vitrine/create-draft-post", Label: "Create a draft post", Category: "content", Cap: schema.CapEditPosts, Annotations: additive,
		Description: "Writes a new blog post as a draft, with the user as its author. It never publishes: a person reviews " +
			"and publishes it.",
		Input: `{"type": "object",
			"properties": {
				"title": {"type": "string", "minLength": 1, "maxLength": 500, "description": "The post's title."},
				"content": {"type": "string", "maxLength": 200000, "description": "The post's content: HTML or block markup."},
				"excerpt": {"type": "string", "maxLength": 5000, "description": "A short summary."}
			},
			"required": ["title"], "additionalProperties": false}`,
		Output: draftSchema,
		Run: func(r *Run, raw json.RawMessage) (any, error) {
			var in struct {
				Title   string  `json:"title"`
				Content *string `json:"content,omitempty"`
				Excerpt *string `json:"excerpt,omitempty"`
			}
			if err := decode(raw, &in); err != nil {
				return nil, err
			}
			body := struct {
				Title   string  `json:"title"`
				Content *string `json:"content,omitempty"`
				Excerpt *string `json:"excerpt,omitempty"`
				Status  string  `json:"status"`
			}{in.Title, in.Content, in.Excerpt, "draft"}
			var p cmsPost
			if err := r.CMS("POST", "/cms/v2/posts?context=edit", body, &p); err != nil {
				return nil, err
			}
			return draftOf(&p), nil
		},
	}
}

// draftOnly loads a post's status and refuses any but a draft (ability_post_not_draft, 409):
// the draft abilities never touch published content.
func draftOnly(r *Run, id int64) (string, error) {
	var p cmsPost
	if err := r.CMS("GET", "/cms/v2/posts/"+strconv.FormatInt(id, 10)+"?context=edit&_fields=id,status", nil, &p); err != nil {
		return "", err
	}
	if p.Status != "draft" {
		return p.Status, &schema.Error{Code: schema.CodeConflict, CMSCode: "ability_post_not_draft",
			Message: "Post " + strconv.FormatInt(id, 10) + " is not a draft (its status is " + p.Status + "): this ability changes drafts only."}
	}
	return p.Status, nil
}

func updateDraftPost() *Ability {
	return &Ability{
		Name: "vitrine/update-draft-post", Label: "Revise a draft post", Category: "content", Cap: schema.CapEditPosts, Annotations: update,
		Description: "Changes the title, content or excerpt of a post that is a draft; a post in any other status is refused " +
			"(409 ability_post_not_draft). It never publishes.",
		Input: `{"type": "object",
			"properties": {
				"id": ` + postIDSchema + `,
				"title": {"type": "string", "minLength": 1, "maxLength": 500},
				"content": {"type": "string", "maxLength": 200000},
				"excerpt": {"type": "string", "maxLength": 5000}
			},
			"required": ["id"], "additionalProperties": false,
			"anyOf": [{"required": ["title"]}, {"required": ["content"]}, {"required": ["excerpt"]}]}`,
		Output: draftSchema,
		Run: func(r *Run, raw json.RawMessage) (any, error) {
			var in struct {
				ID      int64   `json:"id"`
				Title   *string `json:"title,omitempty"`
				Content *string `json:"content,omitempty"`
				Excerpt *string `json:"excerpt,omitempty"`
			}
			if err := decode(raw, &in); err != nil {
				return nil, err
			}
			if _, err := draftOnly(r, in.ID); err != nil {
				return nil, err
			}
			body := struct {
				Title   *string `json:"title,omitempty"`
				Content *string `json:"content,omitempty"`
				Excerpt *string `json:"excerpt,omitempty"`
			}{in.Title, in.Content, in.Excerpt}
			var p cmsPost
			if err := r.CMS("POST", "/cms/v2/posts/"+strconv.FormatInt(in.ID, 10)+"?context=edit", body, &p); err != nil {
				return nil, err
			}
			return draftOf(&p), nil
		},
	}
}

func trashDraftPost() *Ability {
	return &Ability{
		Name: "vitrine/trash-draft-post", Label: "Trash a draft post", Category: "content", Cap: schema.CapDeletePosts, Annotations: removal,
		Description: "Moves a draft post to the trash, where a person may restore it. Trashing a post already in the trash " +
			"changes nothing; a post in any other status is refused (409 ability_post_not_draft).",
		Input: `{"type": "object", "properties": {"id": ` + postIDSchema + `}, "required": ["id"], "additionalProperties": false}`,
		Output: `{"type": "object",
			"properties": {"id": {"type": "integer"}, "status": {"type": "string", "const": "trash"}},
			"required": ["id", "status"]}`,
		Run: func(r *Run, raw json.RawMessage) (any, error) {
			var in struct {
				ID int64 `json:"id"`
			}
			if err := decode(raw, &in); err != nil {
				return nil, err
			}
			out := map[string]any{"id": in.ID, "status": "trash"}
			if status, err := draftOnly(r, in.ID); status == "trash" {
				return out, nil
			} else if err != nil {
				return nil, err
			}
			return out, r.CMS("DELETE", "/cms/v2/posts/"+strconv.FormatInt(in.ID, 10), nil, nil)
		},
	}
}

// --- commerce --------------------------------------------------------------------------------

const moneySchema = `{"type": "object",
	"properties": {"amount": {"type": "integer", "description": "In the currency's minor units."}, "currency": {"type": "string"}, "formatted": {"type": "string"}},
	"required": ["amount", "currency"]}`

const currencySchema = `{"type": "string", "pattern": "^[A-Z]{3}$", "description": "An ISO 4217 code the store sells in."}`

func searchProducts() *Ability {
	return &Ability{
		Name: "vitrine/search-products", Label: "Search products", Category: "commerce", Cap: schema.CapRead, Annotations: readonly,
		Description: "Searches the storefront's catalog as shoppers do: words match titles and descriptions, the last as a " +
			"prefix, longer words with one typo. Prices are in the currency asked for, or the store's default.",
		Input: `{"type": "object",
			"properties": {
				"query": {"type": "string", "minLength": 1, "maxLength": 200, "description": "The words to search for."},
				"currency": ` + currencySchema + `,
				"page": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 1},
				"per_page": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10}
			},
			"required": ["query"], "additionalProperties": false}`,
		Output: `{"type": "object",
			"properties": {
				"total": {"type": "integer", "minimum": 0},
				"products": {"type": "array", "items": {"type": "object",
					"properties": {
						"id": {"type": "integer"}, "slug": {"type": "string"}, "title": {"type": "string"},
						"price": ` + moneySchema + `, "availability": {"type": "string"}, "variants_count": {"type": "integer"},
						"url": {"type": "string"}
					},
					"required": ["id", "slug", "title", "price", "availability"]}}
			},
			"required": ["total", "products"]}`,
		Run: func(r *Run, raw json.RawMessage) (any, error) {
			in := struct {
				Query    string `json:"query"`
				Currency string `json:"currency"`
				Page     int    `json:"page"`
				PerPage  int    `json:"per_page"`
			}{Page: 1, PerPage: 10}
			if err := decode(raw, &in); err != nil {
				return nil, err
			}
			q := url.Values{"q": {in.Query}, "page": {strconv.Itoa(in.Page)}, "per_page": {strconv.Itoa(in.PerPage)}}
			if in.Currency != "" {
				q.Set("currency", in.Currency)
			}
			var page schema.Page[schema.ProductView]
			if err := r.Commerce("GET", "/api/search?"+q.Encode(), nil, &page); err != nil {
				return nil, err
			}
			type product struct {
				ID            schema.ProductID    `json:"id"`
				Slug          string              `json:"slug"`
				Title         string              `json:"title"`
				Price         schema.Money        `json:"price"`
				Availability  schema.Availability `json:"availability"`
				VariantsCount int                 `json:"variants_count"`
				URL           string              `json:"url"`
			}
			out := struct {
				Total    int       `json:"total"`
				Products []product `json:"products"`
			}{Total: page.Total, Products: []product{}}
			for _, p := range page.Data {
				out.Products = append(out.Products, product{p.ID, p.Slug, p.Title, p.Price, p.Availability, p.VariantsCount, p.URL})
			}
			return out, nil
		},
	}
}

// adminVariant is what the staff admin API answers for a variant.
type adminVariant struct {
	ID           schema.VariantID    `json:"id"`
	ProductID    schema.ProductID    `json:"product_id"`
	SKU          string              `json:"sku"`
	Prices       schema.Prices       `json:"prices"`
	Stock        int64               `json:"stock"`
	Availability schema.Availability `json:"availability"`
}

const variantIDSchema = `{"type": "integer", "minimum": 1, "maximum": 9007199254740991,
	"description": "The variant's id (every product has at least one variant)."}`

func variantPath(id schema.VariantID) string {
	return "/api/admin/variants/" + strconv.FormatInt(int64(id), 10)
}

func updateProductPrice() *Ability {
	return &Ability{
		Name: "vitrine/update-product-price", Label: "Set a variant's price", Category: "commerce", Cap: schema.CapManageCatalog, Annotations: update,
		Description: "Sets the price of one variant in one currency, in the currency's minor units (cents: 1999 is 19.99 USD); " +
			"its prices in other currencies stay as they are. Shoppers see it once the edges have the change (a second or so).",
		Input: `{"type": "object",
			"properties": {
				"variant_id": ` + variantIDSchema + `,
				"currency": ` + currencySchema + `,
				"amount": {"type": "integer", "minimum": 0, "maximum": ` + strconv.FormatInt(schema.MaxMinorAmount, 10) + `, "description": "The price in the currency's minor units."}
			},
			"required": ["variant_id", "currency", "amount"], "additionalProperties": false}`,
		Output: `{"type": "object",
			"properties": {
				"variant_id": {"type": "integer"}, "product_id": {"type": "integer"}, "sku": {"type": "string"},
				"currency": {"type": "string"}, "amount": {"type": "integer"},
				"prices": {"type": "object", "additionalProperties": {"type": "integer"}, "description": "Every price the variant sets itself."}
			},
			"required": ["variant_id", "product_id", "currency", "amount", "prices"]}`,
		Run: func(r *Run, raw json.RawMessage) (any, error) {
			var in struct {
				VariantID schema.VariantID `json:"variant_id"`
				Currency  string           `json:"currency"`
				Amount    int64            `json:"amount"`
			}
			if err := decode(raw, &in); err != nil {
				return nil, err
			}
			var v adminVariant
			if err := r.Commerce("GET", variantPath(in.VariantID), nil, &v); err != nil {
				return nil, err
			}
			prices := schema.Prices{}
			for c, a := range v.Prices {
				prices[c] = a
			}
			prices[in.Currency] = in.Amount
			if err := r.Commerce("PATCH", variantPath(in.VariantID), map[string]any{"prices": prices}, &v); err != nil {
				return nil, err
			}
			return map[string]any{"variant_id": v.ID, "product_id": v.ProductID, "sku": v.SKU, "currency": in.Currency,
				"amount": v.Prices[in.Currency], "prices": v.Prices}, nil
		},
	}
}

func updateProductStock() *Ability {
	return &Ability{
		Name: "vitrine/update-product-stock", Label: "Set a variant's stock", Category: "commerce", Cap: schema.CapManageCatalog, Annotations: update,
		Description: "Sets how many units of one variant are in stock (a count, not a change); the storefront shows the " +
			"availability it makes (in stock, low stock, out of stock).",
		Input: `{"type": "object",
			"properties": {
				"variant_id": ` + variantIDSchema + `,
				"stock": {"type": "integer", "minimum": 0, "maximum": 1000000000, "description": "Units in stock."}
			},
			"required": ["variant_id", "stock"], "additionalProperties": false}`,
		Output: `{"type": "object",
			"properties": {
				"variant_id": {"type": "integer"}, "sku": {"type": "string"}, "stock": {"type": "integer"},
				"availability": {"type": "string", "enum": ["in_stock", "low_stock", "out_of_stock"]}
			},
			"required": ["variant_id", "stock", "availability"]}`,
		Run: func(r *Run, raw json.RawMessage) (any, error) {
			var in struct {
				VariantID schema.VariantID `json:"variant_id"`
				Stock     int64            `json:"stock"`
			}
			if err := decode(raw, &in); err != nil {
				return nil, err
			}
			var v adminVariant
			if err := r.Commerce("PATCH", variantPath(in.VariantID), map[string]any{"stock": in.Stock}, &v); err != nil {
				return nil, err
			}
			return map[string]any{"variant_id": v.ID, "sku": v.SKU, "stock": v.Stock, "availability": v.Availability}, nil
		},
	}
}

func listOrdersAwaitingFulfilment() *Ability {
	return &Ability{
		Name: "vitrine/list-orders-awaiting-fulfilment", Label: "List orders awaiting fulfilment", Category: "commerce",
		Cap: schema.CapManageCommerce, Annotations: readonly,
		Description: "Lists the paid orders (partly refunded ones too) not yet fully shipped, oldest first: what the " +
			"warehouse has to pick, pack and ship.",
		Input: `{"type": "object",
			"properties": {
				"page": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 1},
				"per_page": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}
			},
			"additionalProperties": false, "default": {}}`,
		Output: `{"type": "object",
			"properties": {
				"total": {"type": "integer", "minimum": 0},
				"orders": {"type": "array", "items": {"type": "object",
					"properties": {
						"reference": {"type": "string"}, "status": {"type": "string"}, "fulfillment_status": {"type": "string"},
						"email": {"type": "string"}, "created_at": {"type": "string"}, "total": ` + moneySchema + `,
						"items": {"type": "array", "items": {"type": "object",
							"properties": {"sku": {"type": "string"}, "title": {"type": "string"}, "variant_title": {"type": "string"}, "quantity": {"type": "integer"}},
							"required": ["sku", "title", "quantity"]}}
					},
					"required": ["reference", "status", "fulfillment_status", "created_at", "total", "items"]}}
			},
			"required": ["total", "orders"]}`,
		Run: func(r *Run, raw json.RawMessage) (any, error) {
			in := struct {
				Page    int `json:"page"`
				PerPage int `json:"per_page"`
			}{Page: 1, PerPage: 20}
			if err := decode(raw, &in); err != nil {
				return nil, err
			}
			q := url.Values{"status": {schema.OrderPaid + "," + schema.OrderPartiallyRefunded},
				"fulfillment_status": {"unfulfilled,partially_fulfilled"}, "order": {"asc"},
				"page": {strconv.Itoa(in.Page)}, "per_page": {strconv.Itoa(in.PerPage)}}
			var page schema.Page[schema.OrderView]
			if err := r.Commerce("GET", "/api/admin/orders?"+q.Encode(), nil, &page); err != nil {
				return nil, err
			}
			type item struct {
				SKU          string `json:"sku"`
				Title        string `json:"title"`
				VariantTitle string `json:"variant_title"`
				Quantity     int64  `json:"quantity"`
			}
			type order struct {
				Reference         string       `json:"reference"`
				Status            string       `json:"status"`
				FulfillmentStatus string       `json:"fulfillment_status"`
				Email             string       `json:"email"`
				CreatedAt         string       `json:"created_at"`
				Total             schema.Money `json:"total"`
				Items             []item       `json:"items"`
			}
			out := struct {
				Total  int     `json:"total"`
				Orders []order `json:"orders"`
			}{Total: page.Total, Orders: []order{}}
			for _, o := range page.Data {
				od := order{Reference: o.Reference, Status: o.Status, FulfillmentStatus: o.FulfillmentStatus, Email: o.Email,
					CreatedAt: o.CreatedAt.UTC().Format("2006-01-02T15:04:05Z"), Total: o.Totals.Total, Items: []item{}}
				for _, l := range o.Items {
					od.Items = append(od.Items, item{l.SKU, l.Title, l.VariantTitle, l.Quantity})
				}
				out.Orders = append(out.Orders, od)
			}
			return out, nil
		},
	}
}
