package origin

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestValidRedirect(t *testing.T) {
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"", true},
		{"https://client.example/cb?state=1", true},
		{"myapp://callback", true},
		{"http://client.example/cb", false},
		{"HTTP://client.example/cb", false},
		{"javascript:alert(1)", false},
		{"JavaScript:alert(1)", false},
		{"data:text/html,x", false},
		{"vbscript:x", false},
		{"file:///etc/passwd", false},
		{"//client.example/cb", false},
		{"/local/path", false},
		{"https:///no-host", false},
		{"https://client.example/%zz", false},
	} {
		if got := validRedirect("success", tc.url) == ""; got != tc.ok {
			t.Errorf("validRedirect(%q) accepted = %v, want %v", tc.url, got, tc.ok)
		}
	}
}

func TestAddQueryKeepsTheTarget(t *testing.T) {
	got := addQuery("https://client.example/cb?state=a%26b#frag", url.Values{"password": {"abcd efgh"}, "success": {"false"}})
	u, err := url.Parse(got)
	if err != nil || u.Host != "client.example" || u.Path != "/cb" || u.Query().Get("state") != "a&b" || u.Query().Get("password") != "abcd efgh" || u.Fragment != "frag" {
		t.Errorf("addQuery = %q", got)
	}
}

func testServer() *Server {
	return &Server{cfg: Config{Secret: []byte("0123456789abcdef0123456789abcdef")}}
}

func TestSessionToken(t *testing.T) {
	s := testServer()
	now := time.Now()
	tok := s.sessionToken("tenant-a", 42, now.Add(time.Minute))
	if id, ok := s.sessionUser("tenant-a", tok, now); !ok || id != 42 {
		t.Fatalf("sessionUser = %d, %v", id, ok)
	}
	if _, ok := s.sessionUser("tenant-b", tok, now); ok {
		t.Error("a session of one tenant is valid on another")
	}
	if _, ok := s.sessionUser("tenant-a", tok, now.Add(2*time.Minute)); ok {
		t.Error("an expired session is valid")
	}
	other := &Server{cfg: Config{Secret: []byte("another secret, another secret!!")}}
	if _, ok := other.sessionUser("tenant-a", tok, now); ok {
		t.Error("a session signed with another secret is valid")
	}
	if s.csrfFor("approve:"+tok) == s.csrfFor("signin:"+tok) {
		t.Error("CSRF tokens of the two forms are equal")
	}
}

// FuzzSessionToken feeds arbitrary cookies to the session check: it never panics, and only a
// token the server signed is accepted.
func FuzzSessionToken(f *testing.F) {
	s := testServer()
	now := time.Unix(1_800_000_000, 0)
	f.Add(s.sessionToken("t", 7, now.Add(time.Minute)))
	f.Add("")
	f.Add("AAAA")
	f.Fuzz(func(t *testing.T, tok string) {
		id, ok := s.sessionUser("t", tok, now)
		if ok && s.sessionToken("t", id, time.Unix(now.Unix(), 0)) != tok && len(tok) != 64 {
			t.Fatalf("accepted a token the server did not sign: %q", tok)
		}
	})
}

// FuzzValidRedirect: any URL the page accepts as a redirect target parses, has a scheme, and is
// never http or a script scheme.
func FuzzValidRedirect(f *testing.F) {
	for _, s := range []string{"https://a.example/x", "http://a.example", "javascript:x", "myapp://cb", " https://a", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if raw == "" || validRedirect("success", raw) != "" {
			return
		}
		u, err := url.Parse(raw)
		if err != nil || u.Scheme == "" {
			t.Fatalf("accepted %q", raw)
		}
		switch strings.ToLower(u.Scheme) {
		case "http", "javascript", "data", "vbscript", "file":
			t.Fatalf("accepted %q", raw)
		}
		_ = addQuery(raw, url.Values{"success": {"false"}})
	})
}
