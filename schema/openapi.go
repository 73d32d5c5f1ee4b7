package schema

import _ "embed"

//go:embed openapi.json
var openAPIDocument []byte

// OpenAPIDocument is the OpenAPI 3.1 document of the commerce interface, generated from the
// route table and the handlers' types by package cmd/vitrine/openapi (make openapi) and served by edges at
// /api/openapi.json. The slice is shared: callers must not modify it.
func OpenAPIDocument() []byte { return openAPIDocument }
