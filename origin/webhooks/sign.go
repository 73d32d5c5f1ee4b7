package webhooks

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
)

// Headers of a delivery. X-Webhook-Signature is the spec's, exactly: "sha256=" and the hex
// HMAC-SHA256 of the raw body with the endpoint's secret. The timestamp signature covers
// "<timestamp>.<body>", so a receiver can refuse replays of old deliveries; the event id lets it
// drop duplicates (delivery is at least once).
const (
	HeaderSignature          = "X-Webhook-Signature"
	HeaderTimestamp          = "X-Webhook-Timestamp"
	HeaderTimestampSignature = "X-Webhook-Timestamp-Signature"
	HeaderEventID            = "X-Webhook-Event-Id"
	HeaderEventKind          = "X-Webhook-Event"
	HeaderDeliveryID         = "X-Webhook-Delivery-Id"
	HeaderAttempt            = "X-Webhook-Attempt"
	// HeaderPreviousSignature and HeaderPreviousTimestampSignature carry the same signatures made
	// with the previous secret while a rotation's overlap lasts.
	HeaderPreviousSignature          = "X-Webhook-Signature-Previous"
	HeaderPreviousTimestampSignature = "X-Webhook-Timestamp-Signature-Previous"
)

// SecretPrefix starts every endpoint secret.
const SecretPrefix = "whsec_"

// NewSecret returns a new endpoint secret: the prefix and 32 bytes from the CSPRNG, base64url.
func NewSecret() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("webhooks: crypto/rand: " + err.Error())
	}
	return SecretPrefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// Signature is the spec's signature of body: "sha256=<hex HMAC-SHA256(secret, body)>".
func Signature(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// TimestampSignature signs "<unix seconds>.<body>".
func TimestampSignature(secret string, unix int64, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(strconv.AppendInt(nil, unix, 10))
	m.Write([]byte{'.'})
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify reports whether header (an X-Webhook-Signature value) is body's signature with secret,
// comparing in constant time: what a receiver does.
func Verify(secret string, body []byte, header string) bool {
	return hmac.Equal([]byte(Signature(secret, body)), []byte(strings.TrimSpace(header)))
}

// sealer encrypts endpoint secrets at rest with a key derived from the server secret: a copy of
// the database alone does not let anyone sign as the store.
type sealer struct{ aead cipher.AEAD }

func newSealer(serverSecret []byte) (*sealer, error) {
	if len(serverSecret) == 0 {
		return nil, errors.New("webhooks: a server secret is required to seal endpoint secrets")
	}
	m := hmac.New(sha256.New, serverSecret)
	m.Write([]byte("vitrine webhook endpoint secrets v1"))
	block, err := aes.NewCipher(m.Sum(nil))
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &sealer{aead: aead}, nil
}

func (s *sealer) seal(plain string) []byte {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		panic("webhooks: crypto/rand: " + err.Error())
	}
	return s.aead.Seal(nonce, nonce, []byte(plain), nil)
}

func (s *sealer) open(sealed []byte) (string, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return "", errors.New("webhooks: sealed secret too short")
	}
	plain, err := s.aead.Open(nil, sealed[:n], sealed[n:], nil)
	if err != nil {
		return "", errors.New("webhooks: an endpoint secret does not open with this server secret")
	}
	return string(plain), nil
}
