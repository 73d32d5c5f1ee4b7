// Package shopify imports a Shopify product CSV export into a tenant's catalog through
// origin/store. `vitrine import` is its command-line front end.
//
// # Overview
//
// Import reads the file as a stream (encoding/csv, one record at a time): it holds the rows of
// one batch of products (and of the largest product), the handles and SKUs already seen (to
// detect duplicates across the file), and the line, handle and reason of each reject, never the
// file itself. The header
// decides which column is which: columns may come in any order, unknown ones are ignored, and a
// file lacking a required column (Handle, Title, Variant Price) fails before anything is written.
// A UTF-8 byte-order mark is skipped. The names of Shopify's newer export (URL handle, SKU,
// Price, Inventory quantity, Product image URL…) are read as their classic equivalents.
//
// Rows sharing a Handle are one product: its first row carries the product fields and its first
// variant; the following rows add variants (a row with an option value, a SKU, a price or a
// quantity) and images (Image Src, Image Position, Image Alt Text). The rows of a product must be
// contiguous, as Shopify writes them.
//
//	rep, err := shopify.Import(ctx, db, tenant, file, shopify.Options{Rejects: rejectsFile})
//
// # Mapping
//
//   - Handle is the product slug, lowercased and validated by schema.ValidateSlug with the
//     reserved product slugs. Products are matched by slug: an existing one is updated.
//   - Title is the title. Body (HTML) is the description, kept as HTML: Vitrine serves it to
//     headless storefronts, which render (and may sanitise) it; stripping it would lose the
//     merchant's formatting.
//   - Status (active, draft, archived) is the status; Published FALSE makes an active product a
//     draft (only active products are public). Without either column, new products are active,
//     as Shopify publishes a product whose Published cell is empty.
//   - Option1..3 Name/Value are the variant's options in order; Option1 Name "Title" with value
//     "Default Title" is Shopify's product without options, which gets one default variant.
//     Variants are matched by SKU, then by option values; a variant without a SKU gets one made
//     from the handle and its option values (as the admin API does for default variants).
//   - Variant Price is an exact decimal in the tenant's default currency, converted to minor
//     units with the currency's exponent (2 when the currency has no record, as readers assume).
//     Digits past the exponent must be zeros ("1500.00" is 1500 yen; "12.345" dollars is
//     rejected): nothing is rounded. The product's price is its first variant's; other variants
//     carry an override when their price differs. Prices in other currencies are left alone.
//   - Variant Inventory Qty is the stock. A negative quantity (Shopify's oversold count) becomes 0
//     with a warning; an empty cell keeps an existing variant's stock (0 for a new one).
//   - Image Src, Image Position and Image Alt Text are the images, ordered by position; Variant
//     Image URLs are added to the product's images (Vitrine variants have no image). URLs must be
//     absolute http(s). Images past schema.MaxImages are dropped with a warning. The URLs still
//     point at Shopify's CDN: re-host them before closing the Shopify store.
//   - Product Category ("Apparel & Accessories > Clothing > Shirts") becomes a chain of nested
//     categories, each with the slug of its whole path ("apparel-accessories-clothing-shirts"),
//     and the product is put in the last one; Type becomes a root category with the slug of its
//     name. Missing categories are created; existing ones are found by slug and left as they are.
//     Categories are added to a product, never removed from it.
//   - Vendor, Tags, Variant Grams, Variant Compare At Price, Variant Requires Shipping, Variant
//     Taxable, Variant Barcode, SEO and Google Shopping columns are ignored: Vitrine's catalog has
//     no field for them.
//
// # Batches and idempotency
//
// Products are written in batches, Options.BatchProducts per transaction, and a transaction ends
// before it would record more than 450 replicated changes (half of schema.MaxChangesPerTxn),
// whatever the products' sizes. A product whose fields and variants already equal the file's is
// not written at all, so importing the same file twice changes nothing the second time. A column
// the file lacks (Body (HTML), Status and Published, the image columns) leaves the existing
// product's value. Import never deletes: variants and categories absent from the file stay.
//
// # Rejects
//
// A row that cannot be read as CSV, or has no handle, is rejected alone (a product it belonged to
// is imported without it). A row-level error inside a product (a bad price, a duplicate SKU, a
// relative image URL…) rejects the product's group of rows, each reported with its line number
// and the reason, and so does a product the catalog refuses (a SKU another product holds). The
// rest of the file is imported.
package shopify
