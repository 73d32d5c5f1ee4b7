package feed_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"vitrine/schema"
	"vitrine/sync/feed"
	"vitrine/sync/natstest"
)

// recorder is a Sink that records what it is given, and, once it has been told of a change it
// cannot read, asks for a new bootstrap at every checkpoint (as a replica whose state disagrees
// with a head's digest would).
type recorder struct {
	mu          sync.Mutex
	resets      int
	versions    map[string]int64 // log/key → version delivered
	unsupported []string         // log@schema, in order
}

func (r *recorder) Reset(string) { r.mu.Lock(); r.resets++; r.mu.Unlock() }
func (r *recorder) Checkpoint()  {}
func (r *recorder) Change(c *schema.Change) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.versions == nil {
		r.versions = map[string]int64{}
	}
	r.versions[c.Log+"/"+c.Key()] = c.Version
}
func (r *recorder) Unsupported(log string, schemaVersion int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.unsupported = append(r.unsupported, fmt.Sprint(log, "@", schemaVersion))
}
func (r *recorder) ResyncWanted() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.unsupported) > 0 {
		return "state disagrees with a head"
	}
	return ""
}

func (r *recorder) version(key string) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.versions[key]
}

// reschema returns m's body with its schema set to n and the extra fields added.
func reschema(t *testing.T, m feed.Message, n int, extra ...any) feed.Message {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(m.Body, &v); err != nil {
		t.Fatal(err)
	}
	v["schema"] = n
	for i := 0; i+1 < len(extra); i += 2 {
		v[extra[i].(string)] = extra[i+1]
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	m.Body = b
	return m
}

// A follower that meets changes of a newer schema than its build reads (a writer upgraded
// before its readers) skips them without applying anything, counts them apart from malformed
// messages, tells the Sink which log and schema, and does not bootstrap again for them even when
// the Sink asks: a new bootstrap would skip them too.
func TestFollowerSkipsNewerSchema(t *testing.T) {
	cfg := feed.Config{}.WithDefaults()
	newer := schema.ChangeSchemaVersion + 1
	cases := []struct {
		name            string
		batch           func(t *testing.T) []feed.Message
		wantUnsupported []string
		wantNewest      int
		wantMalformed   uint64
	}{
		{"a newer entity and head", func(t *testing.T) []feed.Message {
			return []feed.Message{reschema(t, change("shop", schema.Pub, "2", 2), newer, "colour", "red"), reschema(t, head("shop", 2), newer+1)}
		}, []string{"shop@" + fmt.Sprint(newer), "shop@" + fmt.Sprint(newer+1)}, newer + 1, 0},
		{"a newer registry entry", func(t *testing.T) []feed.Message {
			c := schema.NewChange(schema.PlatformLog, schema.KindTenant, "mall", schema.Pub, map[string]any{"slug": "mall"})
			c.Version, c.TxnFirst, c.TxnLast = 1, 1, 1
			m := feed.Message{Subject: cfg.Prefix + "." + schema.PlatformLog + ".tenant.mall", Body: c.Encode()}
			return []feed.Message{reschema(t, m, newer)}
		}, []string{schema.PlatformLog + "@" + fmt.Sprint(newer)}, newer, 0},
		{"a malformed change is no newer schema", func(t *testing.T) []feed.Message {
			return []feed.Message{{Subject: cfg.Subject(0, "shop", "pub.product.3"), Body: []byte(`{"schema":1,"log":`)}}
		}, nil, 0, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			ns := natstest.Run(t)
			nc := ns.Connect(t)
			js, _ := jetstream.New(nc)
			if _, err := feed.EnsureStream(ctx, js, cfg, "epoch-1"); err != nil {
				t.Fatal(err)
			}
			seq, err := feed.Publish(ctx, js, "epoch-1", []feed.Message{change("shop", schema.Pub, "1", 1), head("shop", 1)}, cfg.HeadSubject(0, "shop"), 0)
			if err != nil {
				t.Fatal(err)
			}
			rec := &recorder{}
			f, err := feed.NewFollower(nc, cfg, cfg.AllFilters(), rec, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			f.Watch = 50 * time.Millisecond
			fctx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { f.Run(fctx); close(done) }()
			t.Cleanup(func() { cancel(); <-done })
			waitFor(t, "the first change", func() bool { return rec.version("shop/pub.product.1") == 1 })

			if _, err := feed.Publish(ctx, js, "epoch-1", tc.batch(t), cfg.HeadSubject(0, "shop"), seq); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the batch to be handled", func() bool {
				st := f.Stats()
				return st.Unsupported == uint64(len(tc.wantUnsupported)) && st.Malformed == tc.wantMalformed && st.Pending == 0
			})
			time.Sleep(300 * time.Millisecond) // six watch ticks: time for a bootstrap it should not start
			st := f.Stats()
			if st.UnsupportedSchema != tc.wantNewest || st.Resets != 1 || st.Resyncs != 0 {
				t.Errorf("stats %+v: want newest schema %d, one bootstrap, no resync", st, tc.wantNewest)
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			if !slices.Equal(rec.unsupported, tc.wantUnsupported) || rec.resets != 1 {
				t.Errorf("sink told of %v after %d resets, want %v after 1", rec.unsupported, rec.resets, tc.wantUnsupported)
			}
			if len(rec.versions) != 2 || rec.versions["shop/pub.product.1"] != 1 || rec.versions["shop/pub.log.head"] != 1 {
				t.Errorf("delivered %v, want only the first batch", rec.versions)
			}
		})
	}
}
