package schema

import (
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Interface is the HTTP interface a route belongs to; it decides the error shape and the CORS
// rules of the route's responses.
type Interface int

// Interfaces.
const (
	Commerce Interface = iota
	CMS
)

func (i Interface) String() string {
	if i == CMS {
		return "cms"
	}
	return "commerce"
}

// Server says which process answers a route.
type Server int

// Servers.
const (
	// AtEdge routes are anonymous public reads answered from the replica. Edges answer them
	// alone; the origin answers them too, from its full replica.
	AtEdge Server = iota
	// AtOrigin routes are forwarded by edges and answered by the origin.
	AtOrigin
)

// Auth is the kind of credential a route requires.
type Auth int

// Auth kinds.
const (
	AuthPublic Auth = iota // no credential
	AuthStaff              // a staff user's application password; the route's Cap is required
	AuthKey                // a server key (esk_…) of the store holding the route's Scope
)

// ArgType is the type of a declared argument.
type ArgType int

// Argument types.
const (
	ArgInt ArgType = iota
	ArgString
	ArgBool
	ArgIntList
	ArgStringList
	// ArgDateTime is a date-time in WordPress's format (YYYY-MM-DD[T ]HH:MM:SS[.frac][Z|±HH[:MM]]);
	// the value is ArgValue.Time, and ArgValue.Zoned says whether it carried a zone (args_cms.go).
	ArgDateTime
	// ArgTermFilter is a CMS taxonomy filter: a list of term ids ("categories=1,2"), or an object
	// sent as name[terms]=…&name[operator]=AND&name[include_children]=1 (args_cms.go). The ids
	// are ArgValue.Ints, the operator ArgValue.Str ("OR" or "AND"), include_children ArgValue.Bool.
	ArgTermFilter
)

// Arg declares one query argument of a route: its type, default and bounds. Validation,
// normalisation (the cache key of edge routes) and the CMS discovery index derive from it.
type Arg struct {
	Name        string
	Type        ArgType
	Description string
	Default     string
	HasMin      bool
	Min         int64
	HasMax      bool
	Max         int64
	Enum        []string
	Required    bool
	// MaxItems bounds list arguments (0: 100).
	MaxItems int
	// Unique refuses list arguments that repeat an item (JSON schema uniqueItems).
	Unique bool
	// TermOperator and TermChildren say which object keys an ArgTermFilter accepts besides
	// terms: operator (include filters) and include_children (hierarchical taxonomies).
	TermOperator bool
	TermChildren bool
}

// Route declares one method on one path. The route table is the single source for routing,
// argument validation, CORS per interface and (for the CMS) the discovery index.
type Route struct {
	// Name identifies the route to handlers and metrics ("products.item").
	Name      string
	Method    string
	Interface Interface
	// Path uses {name} captures. Commerce paths are URL paths ("/api/products/{slug}"); CMS paths
	// are rest_route values ("/cms/v2/posts/{id}").
	Path   string
	Server Server
	Auth   Auth
	Cap    Capability
	// Scope is the one scope a server key needs for an AuthKey route.
	Scope Scope
	Args  []Arg
	// Batch marks CMS routes that may be called from /batch/v1; NoBatch marks those the index
	// explicitly flags as not batch-capable (allow_batch {"v1": false}). A route with neither
	// carries no flag, and is not batch-capable either.
	Batch, NoBatch bool
}

// Pagination bounds of the commerce storefront lists.
const (
	DefaultPerPage  = 24
	MaxPerPage      = 100
	DefaultFeatured = 12
	MaxFeatured     = 50
	// MaxPage bounds page numbers so that offsets stay small integers.
	MaxPage = 100_000
)

// Pagination bounds of CMS collections (WordPress's).
const (
	CMSDefaultPerPage = 10
	CMSMaxPerPage     = 100
)

var (
	argPage    = Arg{Name: "page", Type: ArgInt, Default: "1", HasMin: true, Min: 1, HasMax: true, Max: MaxPage, Description: "Current page of the collection."}
	argPerPage = Arg{Name: "per_page", Type: ArgInt, Default: strconv.Itoa(DefaultPerPage), HasMin: true, Min: 1, HasMax: true, Max: MaxPerPage, Description: "Maximum number of items to be returned in result set."}
	argCurr    = Arg{Name: "currency", Type: ArgString, Description: "Currency code for shown prices; defaults to the store's default currency."}
	argContext = Arg{Name: "context", Type: ArgString, Default: "view", Enum: []string{"view", "embed", "edit"}, Description: "Scope under which the request is made; determines fields present in response."}
)

// Routes is the route table. Order matters only for readability; static segments shadow
// captures at the same depth (see ReservedProductSlugs).
var Routes = append([]Route{
	// Commerce: public storefront reads answered by edges from the replica.
	{Name: "products.list", Method: "GET", Interface: Commerce, Path: "/api/products", Server: AtEdge,
		Args: []Arg{argPage, argPerPage, argCurr, argCategory, argMinPrice, argMaxPrice, argAvailability, argProductSort}},
	// Search and autocomplete answer from the search index beside each tenant's snapshot, with
	// the filters of /api/products (storefront.go declares their arguments). Blog posts are the
	// published CMS posts in a commerce shape.
	{Name: "search", Method: "GET", Interface: Commerce, Path: "/api/search", Server: AtEdge,
		Args: []Arg{argPage, argPerPage, argCurr, argCategory, argMinPrice, argMaxPrice, argAvailability, argSearchSort, argQuery}},
	{Name: "search.autocomplete", Method: "GET", Interface: Commerce, Path: "/api/search/autocomplete", Server: AtEdge,
		Args: []Arg{argSuggestLimit, argQuery}},
	{Name: "posts.list", Method: "GET", Interface: Commerce, Path: "/api/posts", Server: AtEdge,
		Args: []Arg{argPage, argPostsPerPage}},
	{Name: "products.featured", Method: "GET", Interface: Commerce, Path: "/api/products/featured", Server: AtEdge,
		Args: []Arg{{Name: "limit", Type: ArgInt, Default: strconv.Itoa(DefaultFeatured), HasMin: true, Min: 1, HasMax: true, Max: MaxFeatured}, argCurr}},
	{Name: "products.item", Method: "GET", Interface: Commerce, Path: "/api/products/{slug}", Server: AtEdge,
		Args: []Arg{argCurr}},
	{Name: "products.variants", Method: "GET", Interface: Commerce, Path: "/api/products/{slug}/variants", Server: AtEdge,
		Args: []Arg{argCurr}},
	{Name: "categories.list", Method: "GET", Interface: Commerce, Path: "/api/categories", Server: AtEdge},
	{Name: "currencies.list", Method: "GET", Interface: Commerce, Path: "/api/currencies", Server: AtEdge},
	// The OpenAPI 3.1 document of every commerce route (schema/openapi.json, made by package
	// openapi from this table).
	{Name: "openapi", Method: "GET", Interface: Commerce, Path: "/api/openapi.json", Server: AtEdge},

	// Commerce: the shopper's cart and checkout, forwarded to the origin. Carts are keyed by
	// X-Cart-Session; the {item} of a cart line is its variant id.
	{Name: "cart.get", Method: "GET", Interface: Commerce, Path: "/api/cart", Server: AtOrigin},
	{Name: "cart.delete", Method: "DELETE", Interface: Commerce, Path: "/api/cart", Server: AtOrigin},
	{Name: "cart.items.add", Method: "POST", Interface: Commerce, Path: "/api/cart/items", Server: AtOrigin},
	{Name: "cart.items.update", Method: "PATCH", Interface: Commerce, Path: "/api/cart/items/{item}", Server: AtOrigin},
	{Name: "cart.items.delete", Method: "DELETE", Interface: Commerce, Path: "/api/cart/items/{item}", Server: AtOrigin},
	{Name: "cart.options", Method: "PATCH", Interface: Commerce, Path: "/api/cart/options", Server: AtOrigin},
	{Name: "cart.coupon.add", Method: "POST", Interface: Commerce, Path: "/api/cart/coupon", Server: AtOrigin},
	{Name: "cart.coupon.remove", Method: "DELETE", Interface: Commerce, Path: "/api/cart/coupon/{code}", Server: AtOrigin},
	{Name: "cart.giftcard.add", Method: "POST", Interface: Commerce, Path: "/api/cart/gift-card", Server: AtOrigin},
	{Name: "cart.giftcard.remove", Method: "DELETE", Interface: Commerce, Path: "/api/cart/gift-card/{last4}", Server: AtOrigin},
	{Name: "checkout", Method: "POST", Interface: Commerce, Path: "/api/checkout", Server: AtOrigin},

	// Commerce: post-purchase, answered by the origin. Tracking and returns prove ownership of
	// the order with its email (X-Order-Email, or email in the query or body) or its customer's
	// Bearer token; newsletter and contact forms are public. Staff administer returns, customer
	// messages and what checkout applies (coupons, gift cards, shipping methods, tax and
	// lifetimes) with manage_commerce. See origin/tracking.go, returns.go, messages.go and
	// admin_commerce.go.
	{Name: "tracking", Method: "GET", Interface: Commerce, Path: "/api/tracking/{reference}", Server: AtOrigin},
	{Name: "orders.return", Method: "POST", Interface: Commerce, Path: "/api/orders/{reference}/return", Server: AtOrigin},
	{Name: "newsletter.subscribe", Method: "POST", Interface: Commerce, Path: "/api/newsletter/subscribe", Server: AtOrigin},
	{Name: "contact", Method: "POST", Interface: Commerce, Path: "/api/contact", Server: AtOrigin},
	{Name: "admin.returns.list", Method: "GET", Interface: Commerce, Path: "/api/admin/returns", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCommerce,
		Args: []Arg{argPage, argPerPage, {Name: "status", Type: ArgString, Enum: []string{"submitted", "approved", "declined", "received", "refunded"}}}},
	{Name: "admin.returns.get", Method: "GET", Interface: Commerce, Path: "/api/admin/returns/{id}", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCommerce},
	{Name: "admin.returns.transition", Method: "POST", Interface: Commerce, Path: "/api/admin/returns/{id}/transition", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCommerce},
	{Name: "admin.newsletter.list", Method: "GET", Interface: Commerce, Path: "/api/admin/newsletter/subscribers", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCommerce,
		Args: []Arg{argPage, argPerPage}},
	{Name: "admin.contact.list", Method: "GET", Interface: Commerce, Path: "/api/admin/contact-messages", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCommerce,
		Args: []Arg{argPage, argPerPage, {Name: "status", Type: ArgString, Enum: []string{"open", "handled"}}}},
	{Name: "admin.contact.update", Method: "PATCH", Interface: Commerce, Path: "/api/admin/contact-messages/{id}", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCommerce},
	{Name: "admin.coupons.list", Method: "GET", Interface: Commerce, Path: "/api/admin/coupons", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCommerce},
	{Name: "admin.coupons.get", Method: "GET", Interface: Commerce, Path: "/api/admin/coupons/{code}", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCommerce},
	{Name: "admin.coupons.put", Method: "PUT", Interface: Commerce, Path: "/api/admin/coupons/{code}", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCommerce},
	{Name: "admin.coupons.delete", Method: "DELETE", Interface: Commerce, Path: "/api/admin/coupons/{code}", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCommerce},
	{Name: "admin.giftcards.list", Method: "GET", Interface: Commerce, Path: "/api/admin/gift-cards", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCommerce,
		Args: []Arg{argPage, argPerPage, {Name: "last4", Type: ArgString}}},
	{Name: "admin.giftcards.create", Method: "POST", Interface: Commerce, Path: "/api/admin/gift-cards", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCommerce},
	{Name: "admin.giftcards.get", Method: "GET", Interface: Commerce, Path: "/api/admin/gift-cards/{id}", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCommerce},
	{Name: "admin.giftcards.update", Method: "PATCH", Interface: Commerce, Path: "/api/admin/gift-cards/{id}", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCommerce},
	{Name: "admin.shipping.list", Method: "GET", Interface: Commerce, Path: "/api/admin/shipping-methods", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCommerce},
	{Name: "admin.shipping.put", Method: "PUT", Interface: Commerce, Path: "/api/admin/shipping-methods/{code}", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCommerce},
	{Name: "admin.shipping.delete", Method: "DELETE", Interface: Commerce, Path: "/api/admin/shipping-methods/{code}", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCommerce},
	{Name: "admin.settings.get", Method: "GET", Interface: Commerce, Path: "/api/admin/settings", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCommerce},
	{Name: "admin.settings.put", Method: "PUT", Interface: Commerce, Path: "/api/admin/settings", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCommerce},
	// Staff's list of orders (origin/admin_orders.go): by status and fulfilment status (each a
	// comma list), newest or oldest first.
	{Name: "admin.orders.list", Method: "GET", Interface: Commerce, Path: "/api/admin/orders", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCommerce,
		Args: []Arg{argPage, argPerPage,
			{Name: "status", Type: ArgStringList, Unique: true, Enum: []string{OrderPendingPayment, OrderPaid, OrderPaymentFailed, OrderCancelled, OrderRefunded, OrderPartiallyRefunded}, Description: "Only orders in these statuses."},
			{Name: "fulfillment_status", Type: ArgStringList, Unique: true, Enum: []string{"unfulfilled", "partially_fulfilled", "fulfilled", "partially_delivered", "delivered"}, Description: "Only orders in these fulfilment statuses."},
			{Name: "order", Type: ArgString, Default: "desc", Enum: []string{"asc", "desc"}, Description: "By the time the order was placed: desc newest first, asc oldest first."}}},

	// Commerce: server keys, made in store settings by administrators (manage_options). The
	// plaintext is in the creation's answer only. See origin/keys.
	{Name: "admin.bundles.list", Method: "GET", Interface: Commerce, Path: "/api/admin/bundles", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCatalog},
	{Name: "admin.bundles.put", Method: "PUT", Interface: Commerce, Path: "/api/admin/bundles/{id}", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCatalog},
	{Name: "admin.bundles.delete", Method: "DELETE", Interface: Commerce, Path: "/api/admin/bundles/{id}", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCatalog},
	{Name: "admin.shipments.advance", Method: "POST", Interface: Commerce, Path: "/api/admin/shipments/{id}/advance", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCommerce},
	{Name: "admin.apikeys.list", Method: "GET", Interface: Commerce, Path: "/api/admin/api-keys", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageOptions},
	{Name: "admin.apikeys.create", Method: "POST", Interface: Commerce, Path: "/api/admin/api-keys", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageOptions},
	{Name: "admin.apikeys.delete", Method: "DELETE", Interface: Commerce, Path: "/api/admin/api-keys/{id}", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageOptions},
	{Name: "admin.apikeys.roll", Method: "POST", Interface: Commerce, Path: "/api/admin/api-keys/{id}/roll", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageOptions},

	// Commerce: webhook endpoints, made in store settings by administrators (manage_options). The
	// secret is in the answers that make or rotate it only. See origin/webhooks.
	{Name: "admin.webhooks.list", Method: "GET", Interface: Commerce, Path: "/api/admin/webhooks", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageOptions},
	{Name: "admin.webhooks.create", Method: "POST", Interface: Commerce, Path: "/api/admin/webhooks", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageOptions},
	{Name: "admin.webhooks.get", Method: "GET", Interface: Commerce, Path: "/api/admin/webhooks/{id}", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageOptions},
	{Name: "admin.webhooks.update", Method: "PATCH", Interface: Commerce, Path: "/api/admin/webhooks/{id}", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageOptions},
	{Name: "admin.webhooks.delete", Method: "DELETE", Interface: Commerce, Path: "/api/admin/webhooks/{id}", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageOptions},
	{Name: "admin.webhooks.rotate", Method: "POST", Interface: Commerce, Path: "/api/admin/webhooks/{id}/rotate-secret", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageOptions},
	{Name: "admin.webhooks.test", Method: "POST", Interface: Commerce, Path: "/api/admin/webhooks/{id}/test", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageOptions},
	{Name: "admin.webhooks.deliveries", Method: "GET", Interface: Commerce, Path: "/api/admin/webhooks/{id}/deliveries", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageOptions,
		Args: []Arg{argPage, {Name: "per_page", Type: ArgInt, Default: "20", HasMin: true, Min: 1, HasMax: true, Max: MaxPerPage},
			{Name: "state", Type: ArgString, Enum: []string{"pending", "delivered", "failed", "cancelled"}},
			{Name: "kind", Type: ArgString, Description: "Only deliveries of this event kind."},
			{Name: "event_id", Type: ArgString, Description: "Only deliveries of this event."}}},
	{Name: "admin.webhooks.redeliver", Method: "POST", Interface: Commerce, Path: "/api/admin/webhooks/{id}/deliveries/{delivery}/redeliver", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageOptions},

	// Commerce: server-key routes (Authorization: Bearer esk_…), each needing exactly one scope.
	// Edges forward them untouched; keys are checked at the origin only.
	{Name: "orders.packingslip", Method: "GET", Interface: Commerce, Path: "/api/orders/{reference}/packing-slip", Server: AtOrigin, Auth: AuthKey, Scope: ScopeReadOrders},
	{Name: "orders.picklist", Method: "GET", Interface: Commerce, Path: "/api/orders/batch/pick-list", Server: AtOrigin, Auth: AuthKey, Scope: ScopeReadOrders,
		Args: []Arg{{Name: "references", Type: ArgStringList, MaxItems: 500, Unique: true, Description: "Orders to pick, by reference; else every paid order not yet fulfilled in the date range."},
			{Name: "from", Type: ArgDateTime, Description: "Orders placed at or after this time (UTC unless zoned)."},
			{Name: "to", Type: ArgDateTime, Description: "Orders placed before this time."},
			{Name: "limit", Type: ArgInt, Default: "200", HasMin: true, Min: 1, HasMax: true, Max: 500, Description: "Most orders picked at once (oldest first)."}}},
	{Name: "orders.label", Method: "POST", Interface: Commerce, Path: "/api/orders/{reference}/shipping-label", Server: AtOrigin, Auth: AuthKey, Scope: ScopeWriteOrders},
	{Name: "orders.labels.multi", Method: "POST", Interface: Commerce, Path: "/api/orders/{reference}/shipping-labels/multi", Server: AtOrigin, Auth: AuthKey, Scope: ScopeWriteOrders},
	{Name: "orders.returnlabel", Method: "POST", Interface: Commerce, Path: "/api/orders/{reference}/return-label", Server: AtOrigin, Auth: AuthKey, Scope: ScopeWriteOrders},
	{Name: "orders.shipment.label", Method: "GET", Interface: Commerce, Path: "/api/orders/{reference}/shipments/{id}/label", Server: AtOrigin, Auth: AuthKey, Scope: ScopeReadOrders},
	{Name: "orders.batchlabels", Method: "POST", Interface: Commerce, Path: "/api/orders/batch-labels", Server: AtOrigin, Auth: AuthKey, Scope: ScopeWriteOrders},
	{Name: "orders.batchlabels.status", Method: "GET", Interface: Commerce, Path: "/api/orders/batch-labels/{batchId}/status", Server: AtOrigin, Auth: AuthKey, Scope: ScopeReadOrders},
	{Name: "orders.batchlabels.labels", Method: "GET", Interface: Commerce, Path: "/api/orders/batch-labels/{batchId}/labels", Server: AtOrigin, Auth: AuthKey, Scope: ScopeReadOrders},
	{Name: "bundles.analytics", Method: "GET", Interface: Commerce, Path: "/api/bundles/analytics", Server: AtOrigin, Auth: AuthKey, Scope: ScopeReadAnalytics,
		Args: []Arg{{Name: "from", Type: ArgDateTime, Description: "Orders placed at or after this time (default: 30 days ago)."},
			{Name: "to", Type: ArgDateTime, Description: "Orders placed before this time (default: now)."},
			{Name: "limit", Type: ArgInt, Default: "10", HasMin: true, Min: 1, HasMax: true, Max: 100, Description: "How many top bundles and components."}}},
	{Name: "orders.refund", Method: "POST", Interface: Commerce, Path: "/api/orders/{reference}/refund", Server: AtOrigin, Auth: AuthKey, Scope: ScopeWriteOrders},

	// Commerce: customer accounts, forwarded to the origin. Every route but register and login
	// takes the session token as Authorization: Bearer.
	{Name: "customer.register", Method: "POST", Interface: Commerce, Path: "/api/customer/register", Server: AtOrigin},
	{Name: "customer.login", Method: "POST", Interface: Commerce, Path: "/api/customer/login", Server: AtOrigin},
	{Name: "customer.logout", Method: "POST", Interface: Commerce, Path: "/api/customer/logout", Server: AtOrigin},
	{Name: "customer.get", Method: "GET", Interface: Commerce, Path: "/api/customer", Server: AtOrigin},
	{Name: "customer.orders", Method: "GET", Interface: Commerce, Path: "/api/customer/orders", Server: AtOrigin,
		Args: []Arg{argPage, {Name: "per_page", Type: ArgInt, Default: "20", HasMin: true, Min: 1, HasMax: true, Max: MaxPerPage}}},
	{Name: "customer.order", Method: "GET", Interface: Commerce, Path: "/api/customer/orders/{reference}", Server: AtOrigin},
	{Name: "customer.addresses", Method: "GET", Interface: Commerce, Path: "/api/customer/addresses", Server: AtOrigin},
	{Name: "customer.addresses.add", Method: "POST", Interface: Commerce, Path: "/api/customer/addresses", Server: AtOrigin},
	{Name: "customer.addresses.delete", Method: "DELETE", Interface: Commerce, Path: "/api/customer/addresses/{id}", Server: AtOrigin},
	{Name: "customer.wishlist", Method: "GET", Interface: Commerce, Path: "/api/customer/wishlist", Server: AtOrigin},
	{Name: "customer.wishlist.add", Method: "POST", Interface: Commerce, Path: "/api/customer/wishlist", Server: AtOrigin},
	{Name: "customer.wishlist.delete", Method: "DELETE", Interface: Commerce, Path: "/api/customer/wishlist/{product}", Server: AtOrigin},

	// Commerce: subscriptions, answered by the origin. Staff sell a variant as a subscription (its
	// plan, kept at the origin, never replicated) with manage_catalog; a signed-in customer's
	// checkout starts one per subscription line, the origins' maintenance renews them; the
	// customer (Bearer token) or staff with manage_commerce cancel. See origin/subscriptions.
	{Name: "admin.variants.subscription.get", Method: "GET", Interface: Commerce, Path: "/api/admin/variants/{id}/subscription", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCatalog},
	{Name: "admin.variants.subscription.put", Method: "PUT", Interface: Commerce, Path: "/api/admin/variants/{id}/subscription", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCatalog},
	{Name: "admin.variants.subscription.delete", Method: "DELETE", Interface: Commerce, Path: "/api/admin/variants/{id}/subscription", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCatalog},
	{Name: "customer.subscriptions", Method: "GET", Interface: Commerce, Path: "/api/customer/subscriptions", Server: AtOrigin},
	{Name: "customer.subscriptions.cancel", Method: "POST", Interface: Commerce, Path: "/api/customer/subscriptions/{id}/cancel", Server: AtOrigin},
	{Name: "admin.subscriptions.list", Method: "GET", Interface: Commerce, Path: "/api/admin/subscriptions", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCommerce,
		Args: []Arg{argPage, argPerPage, {Name: "status", Type: ArgString, Enum: []string{"active", "past_due", "cancelled", "completed"}}}},
	{Name: "admin.subscriptions.cancel", Method: "POST", Interface: Commerce, Path: "/api/admin/subscriptions/{id}/cancel", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCommerce},

	// Commerce: merchandising. Public reads answered by edges from the replica (flash sales are
	// applied to shown prices there); review submission and staff management at the origin. The
	// social-proof route's {slug} segment takes the product id (a slug is accepted too): the
	// router needs one capture name per position.
	{Name: "flashsales.list", Method: "GET", Interface: Commerce, Path: "/api/flash-sales", Server: AtEdge},
	{Name: "sections.list", Method: "GET", Interface: Commerce, Path: "/api/storefront/sections", Server: AtEdge},
	{Name: "products.reviews", Method: "GET", Interface: Commerce, Path: "/api/products/{slug}/reviews", Server: AtEdge,
		Args: []Arg{argPage, {Name: "per_page", Type: ArgInt, Default: "10", HasMin: true, Min: 1, HasMax: true, Max: MaxPerPage}}},
	{Name: "products.socialproof", Method: "GET", Interface: Commerce, Path: "/api/products/{slug}/social-proof", Server: AtEdge},
	{Name: "products.reviews.create", Method: "POST", Interface: Commerce, Path: "/api/products/{slug}/reviews", Server: AtOrigin},
	{Name: "admin.flashsales.list", Method: "GET", Interface: Commerce, Path: "/api/admin/flash-sales", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCatalog},
	{Name: "admin.flashsales.create", Method: "POST", Interface: Commerce, Path: "/api/admin/flash-sales", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCatalog},
	{Name: "admin.flashsales.get", Method: "GET", Interface: Commerce, Path: "/api/admin/flash-sales/{id}", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCatalog},
	{Name: "admin.flashsales.update", Method: "PUT", Interface: Commerce, Path: "/api/admin/flash-sales/{id}", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCatalog},
	{Name: "admin.flashsales.delete", Method: "DELETE", Interface: Commerce, Path: "/api/admin/flash-sales/{id}", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCatalog},
	{Name: "admin.sections.list", Method: "GET", Interface: Commerce, Path: "/api/admin/sections", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCatalog},
	{Name: "admin.sections.create", Method: "POST", Interface: Commerce, Path: "/api/admin/sections", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCatalog},
	{Name: "admin.sections.update", Method: "PUT", Interface: Commerce, Path: "/api/admin/sections/{id}", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCatalog},
	{Name: "admin.sections.delete", Method: "DELETE", Interface: Commerce, Path: "/api/admin/sections/{id}", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCatalog},
	{Name: "admin.reviews.list", Method: "GET", Interface: Commerce, Path: "/api/admin/reviews", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCatalog,
		Args: []Arg{argPage, argPerPage, {Name: "status", Type: ArgString, Enum: []string{"pending", "approved", "rejected"}}}},
	{Name: "admin.reviews.moderate", Method: "POST", Interface: Commerce, Path: "/api/admin/reviews/{id}/moderate", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCatalog},

	// Commerce: staff catalog administration, answered by the origin.
	{Name: "admin.products.list", Method: "GET", Interface: Commerce, Path: "/api/admin/products", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCatalog,
		Args: []Arg{argPage, argPerPage, {Name: "status", Type: ArgString, Enum: []string{"active", "draft", "archived"}}}},
	{Name: "admin.products.create", Method: "POST", Interface: Commerce, Path: "/api/admin/products", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCatalog},
	{Name: "admin.products.get", Method: "GET", Interface: Commerce, Path: "/api/admin/products/{id}", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCatalog},
	{Name: "admin.products.update", Method: "PATCH", Interface: Commerce, Path: "/api/admin/products/{id}", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCatalog},
	{Name: "admin.products.delete", Method: "DELETE", Interface: Commerce, Path: "/api/admin/products/{id}", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCatalog},
	{Name: "admin.variants.list", Method: "GET", Interface: Commerce, Path: "/api/admin/products/{id}/variants", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCatalog},
	{Name: "admin.variants.create", Method: "POST", Interface: Commerce, Path: "/api/admin/products/{id}/variants", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCatalog},
	{Name: "admin.variants.get", Method: "GET", Interface: Commerce, Path: "/api/admin/variants/{id}", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCatalog},
	{Name: "admin.variants.update", Method: "PATCH", Interface: Commerce, Path: "/api/admin/variants/{id}", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCatalog},
	{Name: "admin.variants.delete", Method: "DELETE", Interface: Commerce, Path: "/api/admin/variants/{id}", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCatalog},
	{Name: "admin.categories.create", Method: "POST", Interface: Commerce, Path: "/api/admin/categories", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCatalog},
	{Name: "admin.categories.update", Method: "PATCH", Interface: Commerce, Path: "/api/admin/categories/{id}", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCatalog},
	{Name: "admin.categories.delete", Method: "DELETE", Interface: Commerce, Path: "/api/admin/categories/{id}", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCatalog},
	{Name: "admin.currencies.create", Method: "POST", Interface: Commerce, Path: "/api/admin/currencies", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCatalog},
	{Name: "admin.currencies.update", Method: "PATCH", Interface: Commerce, Path: "/api/admin/currencies/{code}", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCatalog},
	{Name: "admin.currencies.delete", Method: "DELETE", Interface: Commerce, Path: "/api/admin/currencies/{code}", Server: AtOrigin, Auth: AuthStaff, Cap: CapManageCatalog},

	// CMS discovery (schema/discovery.go builds the bodies from this table): the index "/" and one
	// root per namespace, in the order the index lists the namespaces. Anonymous, public, changed
	// only by a deploy and the tenant's registry entry: edges answer them. Arguments are
	// WordPress's: context (no enum; the index ignores it) and namespace (the one described).
	{Name: "cms.index", Method: "GET", Interface: CMS, Path: "/", Server: AtEdge, Args: []Arg{argIndexContext}},
	{Name: cmsNamespaceRoute, Method: "GET", Interface: CMS, Path: "/oembed/1.0", Server: AtEdge, Args: namespaceArgs("oembed/1.0")},
	{Name: cmsNamespaceRoute, Method: "GET", Interface: CMS, Path: "/agent/v1", Server: AtEdge, Args: namespaceArgs("agent/v1")},
	{Name: cmsNamespaceRoute, Method: "GET", Interface: CMS, Path: "/cms/v2", Server: AtEdge, Args: namespaceArgs("cms/v2")},
	{Name: cmsNamespaceRoute, Method: "GET", Interface: CMS, Path: "/cms-site-health/v1", Server: AtEdge, Args: namespaceArgs("cms-site-health/v1")},
	{Name: cmsNamespaceRoute, Method: "GET", Interface: CMS, Path: "/cms-block-editor/v1", Server: AtEdge, Args: namespaceArgs("cms-block-editor/v1")},
	{Name: cmsNamespaceRoute, Method: "GET", Interface: CMS, Path: "/cms-abilities/v1", Server: AtEdge, Args: namespaceArgs("cms-abilities/v1")},
	// End of CMS discovery.

	// CMS: posts, pages, blocks, menu items and navigation are declared per post type by
	// postTypeRoutes (posttypes.go), appended after this literal.
	// CMS batch: up to 25 requests to batch-capable routes, run by the origin (origin/batch.go).
	{Name: "cms.batch", Method: "POST", Interface: CMS, Path: "/batch/v1", Server: AtOrigin},
}, append(append(append(postTypeRoutes(), mediaRoutes()...), peopleRoutes()...), append(append(menuRoutes(), oembedRoutes()...), append(designRoutes(), agentRoutes()...)...)...)...) // media: routes_media.go; terms, users, application passwords: routes_people.go; menus: routes_menus.go; oEmbed: routes_oembed.go; site design, abilities, agents, site health: routes_design.go

// RouteByName returns the first route with the name, or nil.
func RouteByName(name string) *Route {
	for i := range Routes {
		if Routes[i].Name == name {
			return &Routes[i]
		}
	}
	return nil
}

// ReservedProductSlugs are the static path segments that sit where a product slug would:
// /api/products/featured shadows a product named "featured", so no product may take that slug.
func ReservedProductSlugs() []string {
	return reservedUnder("/api/products/", "{slug}")
}

func reservedUnder(prefix, capture string) []string {
	seen := map[string]bool{}
	hasCapture := false
	for _, r := range Routes {
		if !strings.HasPrefix(r.Path, prefix) {
			continue
		}
		seg, _, _ := strings.Cut(r.Path[len(prefix):], "/")
		if seg == capture {
			hasCapture = true
			continue
		}
		if !strings.HasPrefix(seg, "{") && seg != "" {
			seen[seg] = true
		}
	}
	if !hasCapture {
		return nil
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// ArgValue is one parsed argument.
type ArgValue struct {
	Int  int64
	Str  string
	Bool bool
	Ints []int64
	Strs []string
	// Time is the value of an ArgDateTime; Zoned reports whether it carried a zone (when it did
	// not, Time holds the wall clock in UTC: see ArgValue.TimeIn).
	Time  time.Time
	Zoned bool
	// Given reports whether the caller sent the argument (as opposed to its default).
	Given bool
}

// Args are a route's parsed and validated arguments, in declaration order.
type Args struct {
	route  *Route
	values []ArgValue
}

// Get returns the value of a declared argument. It panics on an undeclared name: that is a bug
// in the handler, not bad input.
func (a *Args) Get(name string) ArgValue {
	for i, d := range a.route.Args {
		if d.Name == name {
			return a.values[i]
		}
	}
	panic("schema: route " + a.route.Name + " has no argument " + name)
}

// Int, Str and Bool are shorthands for Get(name).Int and so on.
func (a *Args) Int(name string) int64  { return a.Get(name).Int }
func (a *Args) Str(name string) string { return a.Get(name).Str }
func (a *Args) Bool(name string) bool  { return a.Get(name).Bool }

// AppendKey appends the normalised arguments to dst: every declared argument, in declaration
// order, with its effective value. Two requests with the same AppendKey read the same thing, so
// it is the argument part of a cache key; undeclared query parameters never reach it.
func (a *Args) AppendKey(dst []byte) []byte {
	for i, d := range a.route.Args {
		v := a.values[i]
		if d.Type == ArgBool && !v.Given && d.Default == "" {
			// An optional boolean without a default that was not sent is not false
			// (sticky=false excludes sticky posts; no sticky lists them first): it is left out.
			continue
		}
		dst = append(dst, d.Name...)
		dst = append(dst, '=')
		switch d.Type {
		case ArgInt:
			// An optional integer without a default that was not sent is not 0 (parent=0 selects
			// top-level terms; no parent selects all).
			if v.Given || d.Default != "" {
				dst = strconv.AppendInt(dst, v.Int, 10)
			}
		case ArgBool:
			dst = strconv.AppendBool(dst, v.Bool)
		case ArgString:
			dst = append(dst, v.Str...)
		case ArgIntList:
			for j, n := range v.Ints {
				if j > 0 {
					dst = append(dst, ',')
				}
				dst = strconv.AppendInt(dst, n, 10)
			}
		case ArgStringList:
			for j, s := range v.Strs {
				if j > 0 {
					dst = append(dst, ',')
				}
				dst = append(dst, s...)
			}
		default:
			dst = appendKeyCMS(dst, d.Name, d.Type, v)
		}
		dst = append(dst, '&')
	}
	return dst
}

// ParseArgs validates the declared arguments of r. get returns the raw value of a query
// parameter and whether it was present. Undeclared parameters are ignored, as WordPress does.
// Failures are one CodeInvalid *Error naming every bad argument in Params.
func ParseArgs(r *Route, get func(name string) (string, bool)) (*Args, error) {
	a := &Args{route: r, values: make([]ArgValue, len(r.Args))}
	var bad map[string]string
	var missing []string
	for i, d := range r.Args {
		raw, given := get(d.Name)
		if d.Type == ArgTermFilter {
			// The object form arrives as name[terms], name[operator]… (args_cms.go).
			v, msg := parseTermFilter(&d, raw, given, get)
			if msg != "" {
				if bad == nil {
					bad = map[string]string{}
				}
				bad[d.Name] = msg
			}
			a.values[i] = v
			continue
		}
		if !given {
			if d.Required {
				missing = append(missing, d.Name)
				continue
			}
			raw = d.Default
		}
		v, msg := parseArg(&d, raw)
		if msg != "" {
			if bad == nil {
				bad = map[string]string{}
			}
			bad[d.Name] = msg
			continue
		}
		// An empty integer without a default reads as not sent, so that cache keys parse back.
		v.Given = given && !(d.Type == ArgInt && strings.TrimSpace(raw) == "" && d.Default == "")
		a.values[i] = v
	}
	if len(missing) > 0 {
		return nil, &Error{Code: CodeInvalid, CMSCode: "rest_missing_callback_param", Field: missing[0],
			Message: "Missing parameter(s): " + strings.Join(missing, ", ")}
	}
	if len(bad) > 0 {
		names := make([]string, 0, len(bad))
		for n := range bad {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, &Error{Code: CodeInvalid, CMSCode: "rest_invalid_param", Field: names[0], Params: bad,
			Message: bad[names[0]]}
	}
	return a, nil
}

func parseArg(d *Arg, raw string) (ArgValue, string) {
	var v ArgValue
	switch d.Type {
	case ArgInt:
		if raw == "" && d.Default == "" {
			return v, ""
		}
		n, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
		if err != nil {
			return v, d.Name + " is not of type integer."
		}
		if msg := checkBounds(d, n); msg != "" {
			return v, msg
		}
		v.Int = n
	case ArgBool:
		switch strings.ToLower(strings.TrimSpace(raw)) {
		case "true", "1":
			v.Bool = true
		case "false", "0", "":
		default:
			return v, d.Name + " is not of type boolean."
		}
	case ArgString:
		if len(raw) > 1000 {
			return v, d.Name + " must be at most 1000 characters long."
		}
		if len(d.Enum) > 0 && !(raw == "" && d.Default == "") && !contains(d.Enum, raw) {
			return v, d.Name + " is not one of " + enumList(d.Enum) + "."
		}
		v.Str = raw
	case ArgIntList:
		for _, part := range splitList(raw) {
			n, err := strconv.ParseInt(part, 10, 64)
			if err != nil {
				return v, d.Name + "[" + strconv.Itoa(len(v.Ints)) + "] is not of type integer."
			}
			v.Ints = append(v.Ints, n)
		}
		if msg := checkItems(d, len(v.Ints)); msg != "" {
			return v, msg
		}
	case ArgStringList:
		for _, part := range splitList(raw) {
			if len(d.Enum) > 0 && !contains(d.Enum, part) {
				return v, d.Name + "[" + strconv.Itoa(len(v.Strs)) + "] is not one of " + enumList(d.Enum) + "."
			}
			if d.Unique && contains(v.Strs, part) {
				return v, d.Name + " has duplicate items."
			}
			v.Strs = append(v.Strs, part)
		}
		if msg := checkItems(d, len(v.Strs)); msg != "" {
			return v, msg
		}
	case ArgDateTime:
		if raw == "" && d.Default == "" {
			return v, ""
		}
		t, zoned, ok := ParseCMSDate(raw)
		if !ok {
			return v, "Invalid date."
		}
		v.Time, v.Zoned, v.Str = t, zoned, raw
	}
	return v, ""
}

func checkBounds(d *Arg, n int64) string {
	switch {
	case d.HasMin && d.HasMax && (n < d.Min || n > d.Max):
		return d.Name + " must be between " + strconv.FormatInt(d.Min, 10) + " (inclusive) and " + strconv.FormatInt(d.Max, 10) + " (inclusive)"
	case d.HasMin && !d.HasMax && n < d.Min:
		return d.Name + " must be greater than or equal to " + strconv.FormatInt(d.Min, 10)
	case d.HasMax && !d.HasMin && n > d.Max:
		return d.Name + " must be less than or equal to " + strconv.FormatInt(d.Max, 10)
	}
	return ""
}

func checkItems(d *Arg, n int) string {
	max := d.MaxItems
	if max == 0 {
		max = 100
	}
	if n > max {
		return d.Name + " must contain at most " + strconv.Itoa(max) + " items."
	}
	return ""
}

// splitList splits a WordPress list argument: comma or space separated, empty parts dropped.
func splitList(raw string) []string {
	return strings.FieldsFunc(raw, func(r rune) bool { return r == ',' || r == ' ' })
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// enumList formats an enum the way WordPress's messages do: "a, b, and c" / "a and b" / "a".
func enumList(e []string) string {
	switch len(e) {
	case 1:
		return e[0]
	case 2:
		return e[0] + " and " + e[1]
	}
	return strings.Join(e[:len(e)-1], ", ") + ", and " + e[len(e)-1]
}

// RoutesAt returns the routes of routes declared on r's interface and path, in table order: the
// handlers WordPress registers on one route, among which its Allow header and a self link's
// targetHints choose (rest_send_allow_header).
func RoutesAt(routes []Route, r *Route) []*Route {
	var out []*Route
	for i := range routes {
		if routes[i].Interface == r.Interface && routes[i].Path == r.Path {
			out = append(out, &routes[i])
		}
	}
	return out
}

// AllowedMethods lists, once each and in table order, the methods of the routes at one path
// (RoutesAt) whose permission check the caller passes, as WordPress's rest_send_allow_header
// does: the value of the Allow header (joined by ", ") and of a self link's targetHints.allow.
// It returns an empty, non-nil list when no check passes (WordPress then sends no Allow).
func AllowedMethods(at []*Route, permitted func(r *Route) bool) []string {
	out := []string{}
	for _, r := range at {
		if !slices.Contains(out, r.Method) && permitted(r) {
			out = append(out, r.Method)
		}
	}
	return out
}
