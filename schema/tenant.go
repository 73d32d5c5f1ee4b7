package schema

import (
	"net/url"
	"strings"
	"time"
)

// TenantStatus says whether a tenant is served.
type TenantStatus string

// Tenant statuses. Only active tenants are served; any other status answers like an unknown
// tenant (404), so a suspended store reveals nothing.
const (
	TenantActive    TenantStatus = "active"
	TenantSuspended TenantStatus = "suspended"
)

// Tenant is one store's entry in the tenant registry. The registry is replicated on the platform
// subjects so that edges resolve hosts without the origin.
type Tenant struct {
	// ID is the tenant's internal key (a UUID in text form); it never appears in URLs.
	ID string `json:"id"`
	// Slug is the tenant's immutable public identity: the X-Tenant-Slug value, the subdomain under
	// the platform domain, and the tenant token of stream subjects.
	Slug string `json:"slug"`
	Name string `json:"name"`
	// BaseURL is the canonical base of every absolute URL rendered for this tenant
	// ("https://api.example.com"); never derived from a request's Host.
	BaseURL string `json:"base_url"`
	// Domains are custom host names that resolve to this tenant, lowercase, without port.
	Domains []string `json:"domains"`
	// Shard groups tenants so that edge pools can serve a subset of them.
	Shard  int          `json:"shard"`
	Status TenantStatus `json:"status"`
	// Timezone is an IANA name; CMS dates are rendered in it.
	Timezone string `json:"timezone"`
	// Currencies are the enabled currency codes; the first is the store's default.
	Currencies []string `json:"currencies"`
	// RateLimit is the requests per minute each client address may make to the store's public
	// routes on an edge; 0 uses the edge's default.
	RateLimit int `json:"rate_limit,omitempty"`
	// Theme is the stylesheet of the store's active block theme (theme.go); "" is DefaultTheme.
	Theme     string    `json:"theme,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	Version   int64     `json:"version"`
}

// DefaultCurrency returns the store's default currency code, or "" when none is enabled.
func (t *Tenant) DefaultCurrency() string {
	if len(t.Currencies) == 0 {
		return ""
	}
	return t.Currencies[0]
}

// HasCurrency reports whether the store sells in the currency code.
func (t *Tenant) HasCurrency(code string) bool {
	for _, c := range t.Currencies {
		if c == code {
			return true
		}
	}
	return false
}

// MaxTenantRateLimit bounds a tenant's per-address rate limit (requests per minute).
const MaxTenantRateLimit = 1_000_000

// MaxShard bounds shard numbers so that they fit a subject token and a small edge filter list.
const MaxShard = 1023

// reservedTenantSlugs cannot name a tenant: they collide with platform subject tokens or with
// host names an operator uses for the platform itself.
var reservedTenantSlugs = map[string]bool{
	"_platform": true, "api": true, "www": true, "admin": true, "edge": true, "origin": true,
	"platform": true, "status": true, "metrics": true,
}

// ValidateTenantSlug checks a tenant slug: 2–40 characters of [a-z0-9-], starting with a letter,
// not ending with a hyphen, and not reserved.
func ValidateTenantSlug(s string) error {
	if len(s) < 2 || len(s) > 40 {
		return Invalid("slug", "tenant slug must be 2 to 40 characters")
	}
	if s[0] < 'a' || s[0] > 'z' {
		return Invalid("slug", "tenant slug must start with a lowercase letter")
	}
	if s[len(s)-1] == '-' {
		return Invalid("slug", "tenant slug must not end with a hyphen")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return Invalid("slug", "tenant slug may contain only a-z, 0-9 and hyphens")
		}
	}
	if reservedTenantSlugs[s] {
		return Invalid("slug", "tenant slug %q is reserved", s)
	}
	return nil
}

// ValidateTenant checks a registry entry before it is written.
func ValidateTenant(t *Tenant) error {
	if err := ValidateTenantSlug(t.Slug); err != nil {
		return err
	}
	if strings.TrimSpace(t.Name) == "" || len(t.Name) > 200 {
		return Invalid("name", "name must be 1 to 200 characters")
	}
	if err := validateBaseURL(t.BaseURL); err != nil {
		return err
	}
	for _, d := range t.Domains {
		if err := ValidateHostName(d); err != nil {
			return Invalid("domains", "domain %q: %s", d, err.(*Error).Message)
		}
	}
	if t.Shard < 0 || t.Shard > MaxShard {
		return Invalid("shard", "shard must be between 0 and %d", MaxShard)
	}
	if t.Status != TenantActive && t.Status != TenantSuspended {
		return Invalid("status", "status must be active or suspended")
	}
	if _, err := time.LoadLocation(t.Timezone); err != nil || t.Timezone == "" || t.Timezone == "Local" {
		return Invalid("timezone", "timezone must be an IANA name such as Europe/Paris")
	}
	if len(t.Currencies) == 0 {
		return Invalid("currencies", "at least one currency must be enabled")
	}
	if t.RateLimit < 0 || t.RateLimit > MaxTenantRateLimit {
		return Invalid("rate_limit", "rate_limit must be between 0 (the edge default) and %d requests per minute", int64(MaxTenantRateLimit))
	}
	seen := map[string]bool{}
	for _, c := range t.Currencies {
		if err := ValidateCurrencyCode(c); err != nil {
			return err
		}
		if seen[c] {
			return Invalid("currencies", "currency %s is listed twice", c)
		}
		seen[c] = true
	}
	return nil
}

func validateBaseURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.ContainsAny(s, "?#") {
		return Invalid("base_url", "base_url must be an absolute http or https URL")
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return Invalid("base_url", "base_url must be scheme and host only, e.g. https://api.example.com")
	}
	return nil
}

// CanonicalBaseURL strips a trailing slash so that paths can be appended directly.
func CanonicalBaseURL(s string) string { return strings.TrimRight(s, "/") }

// ValidateHostName checks a DNS host name (lowercase, no port, no trailing dot).
func ValidateHostName(h string) error {
	if len(h) == 0 || len(h) > 253 {
		return Invalid("host", "host name must be 1 to 253 characters")
	}
	for _, label := range strings.Split(h, ".") {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return Invalid("host", "malformed host name")
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return Invalid("host", "host name may contain only a-z, 0-9, hyphens and dots")
			}
		}
	}
	return nil
}
