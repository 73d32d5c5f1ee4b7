package keys

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"hash/crc32"
	"strings"
)

// A key's plaintext is "esk_", 40 characters of base62 drawn from a CSPRNG (about 238 bits),
// and 6 characters of base62 checksum (CRC-32 of the random part): 50 characters in all. The
// checksum catches a mistyped or truncated key before any lookup, and lets secret scanners
// recognise a real key.
const (
	// Prefix starts every server key.
	Prefix     = "esk_"
	randomLen  = 40
	checkLen   = 6
	plainLen   = len(Prefix) + randomLen + checkLen
	base62     = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	hashDomain = "vitrine server key\x00"
)

// Generate returns a new key's plaintext.
func Generate() string {
	b := make([]byte, 0, plainLen)
	b = append(b, Prefix...)
	var buf [64]byte
	for len(b) < len(Prefix)+randomLen {
		if _, err := rand.Read(buf[:]); err != nil {
			panic("keys: crypto/rand: " + err.Error())
		}
		for _, c := range buf {
			// 248 = 4×62: rejecting the rest keeps every character equally likely.
			if c < 248 && len(b) < len(Prefix)+randomLen {
				b = append(b, base62[c%62])
			}
		}
	}
	return string(appendChecksum(b, b[len(Prefix):]))
}

func appendChecksum(dst, random []byte) []byte {
	sum := crc32.ChecksumIEEE(random)
	var c [checkLen]byte
	for i := checkLen - 1; i >= 0; i-- {
		c[i] = base62[sum%62]
		sum /= 62
	}
	return append(dst, c[:]...)
}

// WellFormed reports whether s has a key's shape: the prefix, the length, base62 characters and
// a matching checksum. Anything else is "missing or malformed", refused without a lookup.
func WellFormed(s string) bool {
	if len(s) != plainLen || !strings.HasPrefix(s, Prefix) {
		return false
	}
	for i := len(Prefix); i < len(s); i++ {
		if strings.IndexByte(base62, s[i]) < 0 {
			return false
		}
	}
	random := []byte(s[len(Prefix) : len(Prefix)+randomLen])
	return string(appendChecksum(nil, random)) == s[len(Prefix)+randomLen:]
}

// Hash is the keyed hash a key is stored and found by: HMAC-SHA256 with the server secret. Keys
// are high-entropy, so no slow KDF is needed, and a database leak without the secret gives
// nothing to test guesses against.
func Hash(secret []byte, plaintext string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(hashDomain))
	m.Write([]byte(plaintext))
	return m.Sum(nil)
}

// Last4 is the part of a key shown in lists (after "esk_…").
func Last4(plaintext string) string { return plaintext[len(plaintext)-4:] }

// Redacted is a key as lists show it: the prefix and the last four characters.
func Redacted(last4 string) string { return Prefix + "…" + last4 }
