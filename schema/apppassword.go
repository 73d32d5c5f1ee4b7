package schema

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"math/big"
)

// HashAppPassword returns the keyed hash stored for an application password: HMAC-SHA256 with
// the server secret of the password stripped of what WordPress ignores (NormalizeAppPassword).
// Every place that makes or checks a password (the origin, the command line, the bench's
// tenants) uses this one rule.
func HashAppPassword(secret []byte, password string) []byte {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(NormalizeAppPassword(password)))
	return mac.Sum(nil)
}

const appPasswordAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// NewAppPassword returns a new application password: AppPasswordLen random letters and digits
// (about 143 bits).
func NewAppPassword() string {
	b := make([]byte, AppPasswordLen)
	n := big.NewInt(int64(len(appPasswordAlphabet)))
	for i := range b {
		k, err := rand.Int(rand.Reader, n)
		if err != nil {
			panic("schema: crypto/rand: " + err.Error())
		}
		b[i] = appPasswordAlphabet[k.Int64()]
	}
	return string(b)
}
