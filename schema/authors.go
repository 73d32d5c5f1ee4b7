package schema

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// KindAuthor is a staff user's public author profile: what WordPress shows of any author of a
// published post to anyone (name, slug, URL, description, avatar). It is replicated (pub state
// only) so that edges embed a post's author; logins, e-mail addresses and roles never leave the
// origin, and the users routes stay there.
const KindAuthor Kind = "author"

// Author is the public profile of a staff user.
type Author struct {
	ID          UserID `json:"id"`
	Name        string `json:"name"`
	Slug        string `json:"slug"`
	URL         string `json:"url"`
	Description string `json:"description"`
	// AvatarHash is the SHA-256 of the trimmed, lowercased e-mail address: the key of the
	// Gravatar URLs, which WordPress publishes too; the address itself is not replicated.
	AvatarHash string `json:"avatar_hash"`
	Version    int64  `json:"version"`
}

// AuthorOf returns the public profile of a user.
func AuthorOf(u *User) *Author {
	return &Author{ID: u.ID, Name: u.DisplayName, Slug: u.Slug, URL: u.Profile.URL, Description: u.Profile.Description,
		AvatarHash: AvatarHash(u.Email), Version: u.Version}
}

// AvatarHash is the Gravatar key of an e-mail address (WordPress 6.8: SHA-256 of the trimmed,
// lowercased address).
func AvatarHash(email string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(strings.TrimSpace(email))))
	return hex.EncodeToString(sum[:])
}

// AvatarURLs returns WordPress's avatar_urls for an e-mail address: Gravatar URLs of sizes 24,
// 48 and 96 with the "mystery person" default and rating g.
func AvatarURLs(email string) map[string]string { return avatarURLs(AvatarHash(email)) }

func avatarURLs(hash string) map[string]string {
	out := make(map[string]string, 3)
	for _, n := range []string{"24", "48", "96"} {
		out[n] = "https://secure.gravatar.com/avatar/" + hash + "?s=" + n + "&d=mm&r=g"
	}
	return out
}

// RenderAuthor renders a user's public profile in embed context, exactly as RenderUser does
// from the full record: an edge's embedded author and the origin's are the same bytes.
func RenderAuthor(a *Author, site Site) *UserView {
	return &UserView{ID: a.ID, Name: a.Name, URL: a.URL, Description: a.Description, Link: site.AuthorLink(a.ID),
		Slug: a.Slug, AvatarURLs: avatarURLs(a.AvatarHash),
		Links: map[string][]Link{
			"self":       {{Href: site.RestURL("/cms/v2/users/" + strconv.FormatInt(int64(a.ID), 10))}},
			"collection": {{Href: site.RestURL("/cms/v2/users")}},
		}}
}
