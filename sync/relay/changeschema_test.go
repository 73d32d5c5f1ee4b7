package relay_test

import (
	"testing"

	"vitrine/schema"
	"vitrine/sync/natstest"
	"vitrine/sync/relay"
)

// A relay publishes the change schema it is given (`vitrine relay --change-schema`), so that a
// fleet's readers can be upgraded before the stream moves to a newer one; it refuses a schema
// this build cannot write.
func TestRelayChangeSchema(t *testing.T) {
	nc := natstest.Run(t).Connect(t)
	for _, tc := range []struct {
		schema int
		ok     bool
	}{
		{0, true}, // the newest
		{schema.OldestChangeSchema, true},
		{schema.ChangeSchemaVersion, true},
		{schema.ChangeSchemaVersion + 1, false},
		{-1, false},
	} {
		_, err := relay.New(nil, nc, relay.Config{ChangeSchema: tc.schema, Logger: quietLogger()})
		if (err == nil) != tc.ok {
			t.Errorf("New with ChangeSchema %d: %v, want ok %v", tc.schema, err, tc.ok)
		}
	}
}
