package schema

// Scope is a permission a server key holds. Each key-protected route needs exactly one; a key
// with none can call nothing, and there is no any-valid-key tier.
type Scope string

// The scopes of the commerce spec.
const (
	// ScopeReadOrders: packing slips, pick lists, label batch status.
	ScopeReadOrders Scope = "read_orders"
	// ScopeWriteOrders: shipping and return labels, refunds.
	ScopeWriteOrders Scope = "write_orders"
	// ScopeReadAnalytics: bundle analytics.
	ScopeReadAnalytics Scope = "read_analytics"
)

// Scopes are every scope, in the spec's order.
var Scopes = []Scope{ScopeReadOrders, ScopeWriteOrders, ScopeReadAnalytics}

// Valid reports whether s is one of Scopes.
func (s Scope) Valid() bool {
	for _, x := range Scopes {
		if s == x {
			return true
		}
	}
	return false
}
