package schema

// CartSessionMinLen is the shortest accepted X-Cart-Session: 22 base64url characters carry 132
// bits, the least that holds the required 128 bits of randomness.
const CartSessionMinLen = 22

// CartSessionMaxLen bounds X-Cart-Session values.
const CartSessionMaxLen = 128

// ValidateCartSession checks an X-Cart-Session value. The documented format is 22 to 128
// characters of the base64url alphabet (A–Z, a–z, 0–9, '-', '_') drawn from a cryptographic
// random source, e.g. 16 or more random bytes encoded with base64url (no padding), or 32 or more
// hex digits. The server cannot measure randomness, but it refuses values that are plainly not
// random: too short, outside the alphabet, or using too few distinct characters (fewer than 10:
// 22 random base64url characters have fewer than 10 distinct ones with negligible probability).
func ValidateCartSession(s string) error {
	const msg = "X-Cart-Session must be 22 to 128 base64url characters from a cryptographic random source (e.g. 16 random bytes, base64url-encoded)"
	if len(s) < CartSessionMinLen || len(s) > CartSessionMaxLen {
		return &Error{Code: CodeInvalid, Field: "X-Cart-Session", Message: msg}
	}
	var seen [128]bool
	distinct := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return &Error{Code: CodeInvalid, Field: "X-Cart-Session", Message: msg}
		}
		if !seen[c] {
			seen[c] = true
			distinct++
		}
	}
	if ValidUUID(s) {
		return &Error{Code: CodeInvalid, Field: "X-Cart-Session", Message: msg + ": a UUID carries at most 122 random bits"}
	}
	if distinct < 10 {
		return &Error{Code: CodeInvalid, Field: "X-Cart-Session", Message: msg + ": this value is not random enough"}
	}
	return nil
}
