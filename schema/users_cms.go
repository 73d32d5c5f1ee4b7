package schema

import (
	"sort"
	"strconv"
)

// Profile is the part of a staff user's record only the CMS users routes write.
type Profile struct {
	FirstName   string `json:"first_name"`
	LastName    string `json:"last_name"`
	Nickname    string `json:"nickname"`
	Description string `json:"description"`
	URL         string `json:"url"`
	Locale      string `json:"locale"`
}

// Capabilities returns the role's capabilities, sorted.
func (r Role) Capabilities() []Capability {
	var out []Capability
	for c := range roleCaps[r] {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// UserView is a staff user as the CMS interface renders it, in WordPress's field order.
// Pointer fields are present only in the contexts that show them.
type UserView struct {
	ID                UserID            `json:"id"`
	Username          *string           `json:"username,omitempty"`
	Name              string            `json:"name"`
	FirstName         *string           `json:"first_name,omitempty"`
	LastName          *string           `json:"last_name,omitempty"`
	Email             *string           `json:"email,omitempty"`
	URL               string            `json:"url"`
	Description       string            `json:"description"`
	Link              string            `json:"link"`
	Locale            *string           `json:"locale,omitempty"`
	Nickname          *string           `json:"nickname,omitempty"`
	Slug              string            `json:"slug"`
	Roles             *[]Role           `json:"roles,omitempty"`
	RegisteredDate    *string           `json:"registered_date,omitempty"`
	Capabilities      *map[string]bool  `json:"capabilities,omitempty"`
	ExtraCapabilities *map[string]bool  `json:"extra_capabilities,omitempty"`
	AvatarURLs        map[string]string `json:"avatar_urls"`
	Meta              *[]any            `json:"meta,omitempty"`
	Links             map[string][]Link `json:"_links,omitempty"`
}

// AuthorLink is a user's public author archive under plain permalinks.
func (s Site) AuthorLink(id UserID) string {
	return s.Base + "/?author=" + strconv.FormatInt(int64(id), 10)
}

// RenderUser renders a user in a context: embed and view show the public profile, edit adds the
// login, e-mail, names, roles and capabilities.
func RenderUser(u *User, context string, site Site) *UserView {
	v := RenderAuthor(AuthorOf(u), site)
	if context == "embed" {
		return v
	}
	meta := []any{}
	v.Meta = &meta
	if context != "edit" {
		return v
	}
	p := u.Profile
	login, email, reg := u.Login, u.Email, u.CreatedAt.UTC().Format("2006-01-02T15:04:05+00:00")
	roles := []Role{u.Role}
	caps := map[string]bool{string(u.Role): true}
	for _, c := range u.Role.Capabilities() {
		caps[string(c)] = true
	}
	extra := map[string]bool{string(u.Role): true}
	v.Username, v.FirstName, v.LastName, v.Email = &login, &p.FirstName, &p.LastName, &email
	v.Locale, v.Nickname, v.Roles, v.RegisteredDate = &p.Locale, &p.Nickname, &roles, &reg
	v.Capabilities, v.ExtraCapabilities = &caps, &extra
	if *v.Locale == "" {
		l := "en_US"
		v.Locale = &l
	}
	return v
}

// ValidUUID reports whether s is a UUID in its canonical text form (8-4-4-4-12 hex digits, any
// case), so that a value can be checked before it reaches a UUID column or is taken for one.
func ValidUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}
