package customers

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"golang.org/x/crypto/argon2"
	"golang.org/x/sync/semaphore"

	"vitrine/schema"
)

// Customer passwords are hashed with argon2id, a memory-hard KDF, at OWASP's recommended
// minimum (19 MiB, 2 passes, 1 lane), and stored in the PHC string format with their parameters
// so that they can be raised later without invalidating stored hashes.
const (
	argonMemoryKiB = 19 * 1024
	argonTime      = 2
	argonThreads   = 1
	argonKeyLen    = 32
	argonSaltLen   = 16
)

// Password length bounds (NIST SP 800-63B: at least 8, allow long passphrases).
const (
	minPasswordLen = 8
	maxPasswordLen = 256
)

// Defaults of a KDF.
const (
	// DefaultKDFMemory is the memory all argon2id computations of an origin may hold at once:
	// 256 MiB, thirteen hashes at argonMemoryKiB.
	DefaultKDFMemory = 256 << 20
	// DefaultKDFWait bounds how long a sign-in or registration waits for its share of the budget.
	DefaultKDFWait = time.Second
)

// errKDFBusy answers a sign-in or registration that waited past its bound for memory to hash
// with: the server is overloaded, not the client wrong (503, as a spent retry budget).
var errKDFBusy = &schema.Error{Code: schema.CodeUnavailable, RetryAfter: 1,
	Message: "too many passwords are being checked at once; retry shortly"}

// KDF computes argon2id under a memory budget. argon2id takes its whole memory cost for every
// computation (argonMemoryKiB each), so a flood of sign-ins, each a goroutine of its own, would
// otherwise allocate without bound: a weighted semaphore sized to the budget, in KiB, holds every
// hash and verification, each weighing its own memory parameter (at most the whole budget), and
// a caller waits for its share at most Wait, then gets errKDFBusy (503 with Retry-After) rather
// than queueing forever. Safe for concurrent use.
type KDF struct {
	sem    *semaphore.Weighted
	budget int64 // KiB
	wait   time.Duration
	// idKey is argon2.IDKey; tests instrument it.
	idKey func(password, salt []byte, time, memory uint32, threads uint8, keyLen uint32) []byte
}

// NewKDF returns a KDF allowing memoryBytes of argon2id memory at once (0: DefaultKDFMemory;
// always at least one hash at argonMemoryKiB) and waiting at most wait for it (0:
// DefaultKDFWait).
func NewKDF(memoryBytes int64, wait time.Duration) *KDF {
	if memoryBytes <= 0 {
		memoryBytes = DefaultKDFMemory
	}
	if wait <= 0 {
		wait = DefaultKDFWait
	}
	budget := max(memoryBytes>>10, argonMemoryKiB)
	return &KDF{sem: semaphore.NewWeighted(budget), budget: budget, wait: wait, idKey: argon2.IDKey}
}

// Concurrency is how many hashes at the current parameters run at once.
func (k *KDF) Concurrency() int64 { return k.budget / argonMemoryKiB }

// derive runs one argon2id computation of memory KiB once the budget has room for it.
func (k *KDF) derive(ctx context.Context, password, salt []byte, passes, memory uint32, threads uint8, keyLen uint32) ([]byte, error) {
	weight := min(int64(memory), k.budget)
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), k.wait)
	defer cancel()
	if err := k.sem.Acquire(wctx, weight); err != nil {
		return nil, errKDFBusy
	}
	defer k.sem.Release(weight)
	return k.idKey(password, salt, passes, memory, threads, keyLen), nil
}

// hash returns the argon2id PHC string of password with a new random salt, or errKDFBusy.
func (k *KDF) hash(ctx context.Context, password string) (string, error) {
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		panic("customers: crypto/rand: " + err.Error())
	}
	key, err := k.derive(ctx, []byte(password), salt, argonTime, argonMemoryKiB, argonThreads, argonKeyLen)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemoryKiB, argonTime, argonThreads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}

// verify reports whether password matches an argon2id PHC string, in constant time for a given
// hash, or errKDFBusy. A malformed hash never matches.
func (k *KDF) verify(ctx context.Context, password, encoded string) (bool, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, nil
	}
	var version int
	var mem, passes uint32
	var threads uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, nil
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &mem, &passes, &threads); err != nil || mem == 0 || passes == 0 || threads == 0 || mem > 1<<20 {
		return false, nil
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil {
		return false, nil
	}
	want, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil || len(want) == 0 || len(want) > 128 {
		return false, nil
	}
	got, err := k.derive(ctx, []byte(password), salt, passes, mem, threads, uint32(len(want)))
	if err != nil {
		return false, err
	}
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// dummyPasswordHash is verified against when a login names no account, so that an unknown
// email costs as much as a wrong password and the two cannot be told apart by timing.
const dummyPasswordHash = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0c2FsdA$9mYqL0XzE2Vv0ZlJm8rRzP6m4rjC7bVv4nqkq1cD3xA"
