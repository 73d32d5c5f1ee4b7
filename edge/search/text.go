package search

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// maxTokenLen caps the bytes of one token: longer runs are cut (on a rune boundary) the same way
// at index and query time, so that a pasted blob cannot blow up the fuzzy index.
const maxTokenLen = 64

// tokenizer splits text into normalised tokens: lowercase, diacritics removed, split on anything
// that is not a letter or a digit (combining marks stay inside their word and are dropped). It
// reuses its buffers: token i is buf[ends[i-1]:ends[i]]. A tokenizer is not safe for concurrent
// use; each operation makes its own.
type tokenizer struct {
	buf  []byte
	ends []int
	// trailing reports whether the last text added ended inside a token (no separator after the
	// last token): its last token may be a word still being typed.
	trailing bool
}

func (t *tokenizer) reset() {
	t.buf = t.buf[:0]
	t.ends = t.ends[:0]
	t.trailing = false
}

func (t *tokenizer) n() int { return len(t.ends) }

func (t *tokenizer) tok(i int) []byte {
	start := 0
	if i > 0 {
		start = t.ends[i-1]
	}
	return t.buf[start:t.ends[i]]
}

// add appends the tokens of s.
func (t *tokenizer) add(s string) {
	start := len(t.buf) // start of the token being built
	in := false         // inside a token
	end := func() {
		if in && len(t.buf) > start {
			t.ends = append(t.ends, len(t.buf))
			start = len(t.buf)
		} else {
			t.buf = t.buf[:start]
		}
		in = false
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			case c >= 'A' && c <= 'Z':
				c += 'a' - 'A'
			default:
				end()
				continue
			}
			in = true
			if len(t.buf)-start < maxTokenLen {
				t.buf = append(t.buf, c)
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			in = true
			t.buf = appendFolded(t.buf, r, start)
		case unicode.Is(unicode.M, r):
			// A combining mark belongs to the word it follows and is dropped; alone it is nothing.
		default:
			end()
		}
	}
	t.trailing = in && len(t.buf) > start
	end()
}

// appendFolded appends the folded form of a letter or digit r to buf, keeping the token that
// starts at start within maxTokenLen bytes.
func appendFolded(buf []byte, r rune, start int) []byte {
	var enc [utf8.UTFMax]byte
	n := utf8.EncodeRune(enc[:], r)
	d := norm.NFKD.Properties(enc[:n]).Decomposition()
	if d == nil {
		d = enc[:n]
	}
	for len(d) > 0 {
		r, size := utf8.DecodeRune(d)
		d = d[size:]
		if unicode.Is(unicode.M, r) {
			continue
		}
		r = unicode.ToLower(r)
		if f := foldSpecial(r); f != "" {
			if len(buf)-start+len(f) <= maxTokenLen {
				buf = append(buf, f...)
			}
			continue
		}
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			continue // a compatibility decomposition may bring in spaces or punctuation
		}
		if len(buf)-start+utf8.RuneLen(r) <= maxTokenLen {
			buf = utf8.AppendRune(buf, r)
		}
	}
	return buf
}

// foldSpecial folds letters that Unicode does not decompose into a base letter and a mark; it
// returns "" for the others.
func foldSpecial(r rune) string {
	switch r {
	case 'ß':
		return "ss"
	case 'æ':
		return "ae"
	case 'œ':
		return "oe"
	case 'ø':
		return "o"
	case 'ł', 'ŀ':
		return "l"
	case 'đ', 'ð':
		return "d"
	case 'þ':
		return "th"
	case 'ı':
		return "i"
	case 'ŧ':
		return "t"
	case 'ħ':
		return "h"
	case 'ſ':
		return "s"
	}
	return ""
}

// isStopWord reports whether a token is one of the English stop words that queries ignore when
// they have other words. Stop words are indexed, so that a query made only of them still finds
// something.
func isStopWord(s string) bool {
	switch s {
	case "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "into", "is", "it",
		"its", "of", "on", "or", "the", "this", "that", "to", "with":
		return true
	}
	return false
}

// normalize returns the tokens of s as strings.
func normalize(s string) []string {
	var t tokenizer
	t.add(s)
	out := make([]string, t.n())
	for i := range out {
		out[i] = string(t.tok(i))
	}
	return out
}

// runeLen counts the runes of a token.
func runeLen(s string) int { return utf8.RuneCountInString(s) }

// allDigits reports whether a token is a number: numbers are never matched with a typo.
func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// withinOne reports whether the Damerau-Levenshtein (optimal string alignment) distance of a and
// b is exactly one: one insertion, deletion, substitution or transposition of adjacent characters.
func withinOne(a, b string) bool {
	if a == b {
		return false
	}
	if isASCII(a) && isASCII(b) {
		return withinOneSeq([]byte(a), []byte(b))
	}
	return withinOneSeq([]rune(a), []rune(b))
}

func withinOneSeq[T byte | rune](a, b []T) bool {
	if len(a) < len(b) {
		a, b = b, a
	}
	switch len(a) - len(b) {
	case 0:
		i := 0
		for i < len(a) && a[i] == b[i] {
			i++
		}
		if i == len(a) {
			return false
		}
		if equalSeq(a[i+1:], b[i+1:]) {
			return true // substitution
		}
		return i+1 < len(a) && a[i] == b[i+1] && a[i+1] == b[i] && equalSeq(a[i+2:], b[i+2:])
	case 1:
		i := 0
		for i < len(b) && a[i] == b[i] {
			i++
		}
		return equalSeq(a[i+1:], b[i:]) // a has one more character, at i
	default:
		return false
	}
}

func equalSeq[T byte | rune](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// deletes calls f with each distinct string made by deleting one character (rune) of s.
func deletes(s string, buf []byte, f func(v []byte)) []byte {
	prev := -1
	for i := 0; i < len(s); {
		_, size := utf8.DecodeRuneInString(s[i:])
		// Deleting either of two equal adjacent runes gives the same string: emit it once.
		if prev >= 0 && s[prev:i] == s[i:i+size] {
			prev, i = i, i+size
			continue
		}
		buf = append(buf[:0], s[:i]...)
		buf = append(buf, s[i+size:]...)
		f(buf)
		prev, i = i, i+size
	}
	return buf
}
