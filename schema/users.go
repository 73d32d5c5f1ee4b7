package schema

import (
	"net/mail"
	"strings"
	"time"
)

// Role is a staff user's role. The five WordPress roles keep WordPress's capabilities;
// shop_manager is WooCommerce's role for merchants who run the catalog and orders.
type Role string

// Roles.
const (
	RoleAdministrator Role = "administrator"
	RoleEditor        Role = "editor"
	RoleAuthor        Role = "author"
	RoleContributor   Role = "contributor"
	RoleSubscriber    Role = "subscriber"
	RoleShopManager   Role = "shop_manager"
)

// Capability is a permission checked by a route or a handler.
type Capability string

// Capabilities. The WordPress ones keep WordPress's names and meanings.
const (
	CapRead                 Capability = "read"
	CapEditPosts            Capability = "edit_posts"
	CapEditOthersPosts      Capability = "edit_others_posts"
	CapEditPublishedPosts   Capability = "edit_published_posts"
	CapPublishPosts         Capability = "publish_posts"
	CapDeletePosts          Capability = "delete_posts"
	CapDeleteOthersPosts    Capability = "delete_others_posts"
	CapDeletePublishedPosts Capability = "delete_published_posts"
	CapReadPrivatePosts     Capability = "read_private_posts"
	CapEditPrivatePosts     Capability = "edit_private_posts"
	CapDeletePrivatePosts   Capability = "delete_private_posts"
	CapUploadFiles          Capability = "upload_files"
	CapManageCategories     Capability = "manage_categories"
	CapEditThemeOptions     Capability = "edit_theme_options"
	CapListUsers            Capability = "list_users"
	CapCreateUsers          Capability = "create_users"
	CapEditUsers            Capability = "edit_users"
	CapManageOptions        Capability = "manage_options"
	// CapUnfilteredHTML lets a user write HTML unfiltered (WordPress's unfiltered_html: editors
	// and administrators). Without it, what the user writes is filtered at write time
	// (origin/kses).
	CapUnfilteredHTML Capability = "unfiltered_html"
	// CapManageCatalog lets a user write products, variants, categories and currencies.
	CapManageCatalog Capability = "manage_catalog"
	// CapManageCommerce lets a user run what happens around orders: returns, customer messages
	// and newsletter subscribers (customer data), and what checkout applies (coupons, gift
	// cards, shipping methods, tax and lifetimes).
	CapManageCommerce Capability = "manage_commerce"
)

var roleCaps = func() map[Role]map[Capability]bool {
	set := func(caps ...Capability) map[Capability]bool {
		m := make(map[Capability]bool, len(caps))
		for _, c := range caps {
			m[c] = true
		}
		return m
	}
	contributor := []Capability{CapRead, CapEditPosts, CapDeletePosts}
	author := append(append([]Capability{}, contributor...), CapUploadFiles, CapEditPublishedPosts, CapPublishPosts, CapDeletePublishedPosts)
	editor := append(append([]Capability{}, author...), CapEditOthersPosts, CapDeleteOthersPosts, CapReadPrivatePosts,
		CapEditPrivatePosts, CapDeletePrivatePosts, CapManageCategories, CapUnfilteredHTML)
	shop := append(append([]Capability{}, editor...), CapManageCatalog, CapManageCommerce, CapListUsers)
	admin := append(append([]Capability{}, shop...), CapEditThemeOptions, CapCreateUsers, CapEditUsers, CapManageOptions)
	return map[Role]map[Capability]bool{
		RoleSubscriber:    set(CapRead),
		RoleContributor:   set(contributor...),
		RoleAuthor:        set(author...),
		RoleEditor:        set(editor...),
		RoleShopManager:   set(shop...),
		RoleAdministrator: set(admin...),
	}
}()

// Can reports whether the role grants the capability. Unknown roles grant nothing.
func (r Role) Can(c Capability) bool { return roleCaps[r][c] }

// Valid reports whether r is a known role.
func (r Role) Valid() bool { _, ok := roleCaps[r]; return ok }

// User is a staff user of one tenant: a CMS author and, with the capability, a catalog manager.
type User struct {
	ID          UserID    `json:"id"`
	Login       string    `json:"login"`
	Email       string    `json:"email"`
	DisplayName string    `json:"display_name"`
	Slug        string    `json:"slug"`
	Role        Role      `json:"role"`
	CreatedAt   time.Time `json:"created_at"`
	Version     int64     `json:"version"`
	// Profile is what the CMS users routes write besides the above (users_cms.go).
	Profile Profile `json:"profile"`
}

// ValidateUser checks a user before it is written.
func ValidateUser(u *User) error {
	if len(u.Login) < 1 || len(u.Login) > 60 {
		return Invalid("login", "login must be 1 to 60 characters")
	}
	for i := 0; i < len(u.Login); i++ {
		c := u.Login[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '@') {
			return Invalid("login", "login may contain only letters, digits and - _ . @")
		}
	}
	if err := ValidateEmail("email", u.Email); err != nil {
		return err
	}
	if err := ValidateText("display_name", u.DisplayName, 250, false); err != nil {
		return err
	}
	if err := ValidateSlug("slug", u.Slug, nil); err != nil {
		return err
	}
	if !u.Role.Valid() {
		return Invalid("role", "role must be one of administrator, editor, author, contributor, subscriber, shop_manager")
	}
	return nil
}

// NormalizeAppPassword removes the characters WordPress ignores in an application password
// (anything that is not an ASCII letter or digit, in particular the display spaces).
func NormalizeAppPassword(p string) string {
	var b strings.Builder
	b.Grow(len(p))
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// AppPasswordLen is the length of an application password: 24 letters and digits, about 143
// bits of entropy, shown to the user in six groups of four.
const AppPasswordLen = 24

// ChunkAppPassword formats a password the way WordPress shows it: "abcd efgh ijkl …".
func ChunkAppPassword(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i += 4 {
		if i > 0 {
			b.WriteByte(' ')
		}
		end := i + 4
		if end > len(p) {
			end = len(p)
		}
		b.WriteString(p[i:end])
	}
	return b.String()
}

// ValidateEmail checks that s is one bare email address (no display name, no spaces), at most
// 254 bytes long.
func ValidateEmail(field, s string) error {
	addr, err := mail.ParseAddress(s)
	if err != nil || addr.Address != s || len(s) > 254 || !strings.Contains(s[strings.LastIndexByte(s, '@')+1:], ".") {
		return Invalid(field, "%s is not a valid email address", field)
	}
	return nil
}
