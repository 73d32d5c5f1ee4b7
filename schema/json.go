package schema

import (
	"bytes"
	"encoding/json"
)

// MarshalJSON encodes a response body. Unlike json.Marshal it leaves <, > and & alone: API bodies
// are JSON documents, never inlined into HTML, and URLs with query strings stay readable.
func MarshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}
