package oembed

import (
	"regexp"
	"strings"
)

// Provider is a known oEmbed provider: the URLs it embeds (Pattern) and its endpoint. An
// endpoint's "{format}" becomes "json", as WordPress fills it.
type Provider struct {
	Name     string
	Pattern  *regexp.Regexp
	Endpoint string
}

// provider is a shorthand for the registry below.
func provider(name, pattern, endpoint string) Provider {
	return Provider{Name: name, Pattern: regexp.MustCompile(pattern), Endpoint: endpoint}
}

// Providers is the built-in registry: a representative part of WordPress's sanctioned providers
// (class-wp-oembed.php), in its order, with X's new host beside Twitter's. A URL matching none is
// looked up by discovery (the page's oEmbed <link>), when the request allows it.
//
// A provider of this list is trusted as WordPress trusts it (its iframes are kept with their
// own attributes, sandboxed); a discovered one is not (its html is cut down to a blockquote and
// one iframe, sandboxed to scripts only: sanitize.go).
var Providers = []Provider{
	provider("YouTube", `(?i)^https?://((m|www)\.)?youtube\.com/watch.*`, "https://www.youtube.com/oembed"),
	provider("YouTube", `(?i)^https?://((m|www)\.)?youtube\.com/playlist.*`, "https://www.youtube.com/oembed"),
	provider("YouTube", `(?i)^https?://((m|www)\.)?youtube\.com/shorts/.*`, "https://www.youtube.com/oembed"),
	provider("YouTube", `(?i)^https?://youtu\.be/.*`, "https://www.youtube.com/oembed"),
	provider("Vimeo", `(?i)^https?://(.+\.)?vimeo\.com/.*`, "https://vimeo.com/api/oembed.{format}"),
	provider("Dailymotion", `(?i)^https?://(www\.)?dailymotion\.com/.*`, "https://www.dailymotion.com/services/oembed"),
	provider("Dailymotion", `(?i)^https?://dai\.ly/.*`, "https://www.dailymotion.com/services/oembed"),
	provider("Flickr", `(?i)^https?://(www\.)?flickr\.com/.*`, "https://www.flickr.com/services/oembed/"),
	provider("Flickr", `(?i)^https?://flic\.kr/.*`, "https://www.flickr.com/services/oembed/"),
	provider("WordPress.tv", `(?i)^https?://wordpress\.tv/.*`, "https://wordpress.tv/oembed/"),
	provider("Twitter", `(?i)^https?://(www\.)?twitter\.com/\w{1,15}/status(es)?/.*`, "https://publish.twitter.com/oembed"),
	provider("Twitter", `(?i)^https?://(www\.)?twitter\.com/\w{1,15}$`, "https://publish.twitter.com/oembed"),
	provider("Twitter", `(?i)^https?://(www\.)?twitter\.com/\w{1,15}/likes$`, "https://publish.twitter.com/oembed"),
	provider("Twitter", `(?i)^https?://(www\.)?twitter\.com/\w{1,15}/lists/.*`, "https://publish.twitter.com/oembed"),
	provider("Twitter", `(?i)^https?://(www\.)?twitter\.com/\w{1,15}/timelines/.*`, "https://publish.twitter.com/oembed"),
	provider("X", `(?i)^https?://(www\.)?x\.com/\w{1,15}/status(es)?/.*`, "https://publish.twitter.com/oembed"),
	provider("SoundCloud", `(?i)^https?://(www\.)?soundcloud\.com/.*`, "https://soundcloud.com/oembed"),
	provider("SlideShare", `(?i)^https?://(.+?\.)?slideshare\.net/.*`, "https://www.slideshare.net/api/oembed/2"),
	provider("Spotify", `(?i)^https?://(open|play)\.spotify\.com/.*`, "https://embed.spotify.com/oembed/"),
	provider("Imgur", `(?i)^https?://(.+\.)?imgur\.com/.*`, "https://api.imgur.com/oembed"),
	provider("Issuu", `(?i)^https?://(www\.)?issuu\.com/.+/docs/.+`, "https://issuu.com/oembed_wp"),
	provider("Mixcloud", `(?i)^https?://(www\.)?mixcloud\.com/.*`, "https://www.mixcloud.com/oembed"),
	provider("TED", `(?i)^https?://(www\.|embed\.)?ted\.com/talks/.*`, "https://www.ted.com/services/v1/oembed.{format}"),
	provider("Tumblr", `(?i)^https?://(.+)\.tumblr\.com/post/.*`, "https://www.tumblr.com/oembed/1.0"),
	provider("Kickstarter", `(?i)^https?://(www\.)?kickstarter\.com/projects/.*`, "https://www.kickstarter.com/services/oembed"),
	provider("Kickstarter", `(?i)^https?://kck\.st/.*`, "https://www.kickstarter.com/services/oembed"),
	provider("Cloudup", `(?i)^https?://cloudup\.com/.*`, "https://cloudup.com/oembed"),
	provider("Reddit", `(?i)^https?://(www\.)?reddit\.com/r/[^/]+/comments/.*`, "https://www.reddit.com/oembed"),
	provider("Speaker Deck", `(?i)^https?://(www\.)?speakerdeck\.com/.*`, "https://speakerdeck.com/oembed.{format}"),
	provider("TikTok", `(?i)^https?://(www\.)?tiktok\.com/.*/video/.*`, "https://www.tiktok.com/oembed"),
	provider("Pinterest", `(?i)^https?://([a-z]{2}|www)\.pinterest\.com(\.(au|mx))?/.*`, "https://www.pinterest.com/oembed.json"),
	provider("Pocket Casts", `(?i)^https?://pca\.st/.+`, "https://pca.st/oembed.json"),
}

// match returns the endpoint of the first provider of list whose pattern matches target.
func match(list []Provider, target string) (endpoint string, ok bool) {
	for _, p := range list {
		if p.Pattern.MatchString(target) {
			return strings.ReplaceAll(p.Endpoint, "{format}", "json"), true
		}
	}
	return "", false
}
