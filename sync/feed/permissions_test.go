package feed_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"vitrine/schema"
	"vitrine/sync/blob"
	"vitrine/sync/feed"
	"vitrine/sync/natstest"
	"vitrine/sync/region"
	"vitrine/sync/snapshot"
)

// deployDir is the repository's shipped NATS configuration.
const deployDir = "../../deploy/nats"

// sink records what a Follower delivers.
type sink struct {
	mu   sync.Mutex
	keys map[string]bool // log/key of every change delivered
}

func (s *sink) Reset(string) {}
func (s *sink) Checkpoint()  {}
func (s *sink) Change(c *schema.Change) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keys == nil {
		s.keys = map[string]bool{}
	}
	s.keys[c.Log+"/"+c.Key()] = true
}

func (s *sink) has(k string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys[k]
}

// violations collects a connection's asynchronous errors (permission violations).
type violations struct {
	mu   sync.Mutex
	errs []string
}

func (v *violations) option() nats.Option {
	return nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		v.mu.Lock()
		v.errs = append(v.errs, err.Error())
		v.mu.Unlock()
	})
}

// saw waits for a permission violation naming subject (any subject under it when it ends with
// ".>").
func (v *violations) saw(subject string) bool {
	quoted := `"` + subject + `"`
	if under, ok := strings.CutSuffix(subject, ">"); ok {
		quoted = `"` + under
	}
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		v.mu.Lock()
		for _, e := range v.errs {
			if strings.Contains(e, "permissions violation") && strings.Contains(e, quoted) {
				v.mu.Unlock()
				return true
			}
		}
		v.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

func change(log string, vis schema.Visibility, id string, version int64) feed.Message {
	c := schema.NewChange(log, schema.KindProduct, id, vis, map[string]any{"id": id})
	c.Version, c.TxnFirst, c.TxnLast = version, version, version
	return feed.Message{Subject: feed.Config{}.WithDefaults().Subject(0, log, c.Key()), Body: c.Encode()}
}

func head(log string, version int64) feed.Message {
	c := schema.Change{Schema: schema.ChangeSchemaVersion, Log: log, Kind: schema.KindHead, ID: schema.HeadID, Vis: schema.Pub, Version: version}
	return feed.Message{Subject: feed.Config{}.WithDefaults().HeadSubject(0, log), Body: c.Encode()}
}

func follow(t *testing.T, nc *nats.Conn, cfg feed.Config, filters []string) *sink {
	t.Helper()
	s := &sink{}
	f, err := feed.NewFollower(nc, cfg, filters, s, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	f.Watch = 100 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return s
}

// eventually reports whether cond became true within 15 seconds (for goroutines, which may not
// call t.Fatal).
func eventually(cond func() bool) bool {
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The shipped NATS configuration (deploy/nats: TLS with client certificates, one nkey per role,
// least-privilege permissions, the regional leaf node) runs, carries the stream from the relay's
// role to an edge's role, directly and through a leaf node, and refuses what each role must not
// do: an edge publishing on a state subject, deleting, purging or reconfiguring the stream,
// reading a message by subject, tapping the stream's subjects, touching the event stream; the
// relay and the origin deleting or purging the stream; a connection without credentials. The
// origin's role writes, sweeps and deletes in the media bucket; an edge reads a media file
// directly and through the leaf node, and may not write, overwrite, delete or purge one.
func TestShippedNATSPermissions(t *testing.T) {
	ctx := context.Background()
	sec := natstest.RunSecure(t, deployDir)
	cfg := feed.Config{}.WithDefaults()

	// The relay's role creates the streams and publishes a public and a private change.
	relayNC := sec.Connect(t, sec.URL, "relay")
	relayJS, _ := jetstream.New(relayNC)
	if _, err := feed.EnsureStream(ctx, relayJS, cfg, "epoch-1"); err != nil {
		t.Fatalf("relay creates the state stream: %v", err)
	}
	if _, err := feed.EnsureEventStream(ctx, relayJS, cfg); err != nil {
		t.Fatalf("relay creates the event stream: %v", err)
	}
	msgs := []feed.Message{change("shop", schema.Pub, "1", 1), change("shop", schema.Priv, "2", 2), head("shop", 2)}
	if _, err := feed.Publish(ctx, relayJS, "epoch-1", msgs, cfg.HeadSubject(0, "shop"), 0); err != nil {
		t.Fatalf("relay publishes: %v", err)
	}

	// An edge follows its public subjects, directly and, in a region, from the regional leaf
	// node's mirror (no JetStream domain: the mirror has the stream's name).
	edgeNC := sec.Connect(t, sec.URL, "edge")
	leafURL := sec.StartLeaf(t)
	runMirror(t, sec, leafURL)
	leafNC := sec.Connect(t, leafURL, "edge")
	for name, s := range map[string]*sink{
		"direct":         follow(t, edgeNC, cfg, cfg.PublicFilters(nil)),
		"via leaf node":  follow(t, leafNC, cfg, cfg.PublicFilters(nil)),
		"origin, direct": follow(t, sec.Connect(t, sec.URL, "origin"), cfg, cfg.AllFilters()),
	} {
		waitFor(t, "the "+name+" follower to receive the public change", func() bool { return s.has("shop/pub.product.1") })
		if name != "origin, direct" && s.has("shop/priv.product.2") {
			t.Fatalf("the %s edge follower received a private change", name)
		}
	}

	st, err := relayJS.Stream(ctx, cfg.Stream)
	if err != nil {
		t.Fatal(err)
	}
	before := st.CachedInfo().State.Msgs
	short := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, 500*time.Millisecond) }

	// refused runs op as role (on url, with the JetStream domain when given) and requires it to
	// fail with a permission violation naming subject.
	refused := func(role, url, domain, what, subject string, op func(nc *nats.Conn, js jetstream.JetStream) error) {
		t.Helper()
		v := &violations{}
		nc := sec.Connect(t, url, role, v.option())
		js, _ := jetstream.New(nc)
		if domain != "" {
			js, _ = jetstream.NewWithDomain(nc, domain)
		}
		err := op(nc, js)
		nc.Flush()
		if !v.saw(subject) {
			t.Errorf("%s: %s was not refused (err %v)", role, what, err)
		}
	}
	deleteStream := func(_ *nats.Conn, js jetstream.JetStream) error {
		c, cancel := short()
		defer cancel()
		return js.DeleteStream(c, cfg.Stream)
	}
	purgeStream := func(_ *nats.Conn, js jetstream.JetStream) error {
		c, cancel := short()
		defer cancel()
		s, err := js.Stream(c, cfg.Stream)
		if err != nil {
			return err
		}
		return s.Purge(c)
	}
	for _, tc := range []struct {
		role, what, subject string
		op                  func(*nats.Conn, jetstream.JetStream) error
	}{
		{"edge", "publish on a public state subject", "vitrine.0.shop.pub.product.1", func(nc *nats.Conn, _ jetstream.JetStream) error {
			return nc.Publish("vitrine.0.shop.pub.product.1", change("shop", schema.Pub, "1", 9).Body)
		}},
		{"edge", "publish on the registry", "vitrine._platform.tenant.shop", func(nc *nats.Conn, _ jetstream.JetStream) error {
			return nc.Publish("vitrine._platform.tenant.shop", []byte("{}"))
		}},
		{"edge", "JetStream publish on a head", "vitrine.0.shop.pub.log.head", func(_ *nats.Conn, js jetstream.JetStream) error {
			c, cancel := short()
			defer cancel()
			_, err := js.Publish(c, "vitrine.0.shop.pub.log.head", head("shop", 99).Body)
			return err
		}},
		{"edge", "stream delete", "$JS.API.STREAM.DELETE.VITRINE_STATE", deleteStream},
		{"edge", "stream purge", "$JS.API.STREAM.PURGE.VITRINE_STATE", purgeStream},
		{"edge", "stream update", "$JS.API.STREAM.UPDATE.VITRINE_STATE", func(_ *nats.Conn, js jetstream.JetStream) error {
			c, cancel := short()
			defer cancel()
			_, err := js.UpdateStream(c, jetstream.StreamConfig{Name: cfg.Stream, Subjects: []string{"vitrine.>"}, MaxMsgsPerSubject: 1})
			return err
		}},
		{"edge", "reading a private message by subject", "$JS.API.STREAM.MSG.GET.VITRINE_STATE", func(_ *nats.Conn, js jetstream.JetStream) error {
			c, cancel := short()
			defer cancel()
			s, err := js.Stream(c, cfg.Stream)
			if err != nil {
				return err
			}
			_, err = s.GetLastMsgForSubject(c, "vitrine.0.shop.priv.product.2")
			return err
		}},
		{"edge", "subscribing to the stream's subjects", "vitrine.>", func(nc *nats.Conn, _ jetstream.JetStream) error {
			_, err := nc.SubscribeSync("vitrine.>")
			return err
		}},
		{"edge", "a consumer on the event stream", "$JS.API.CONSUMER.CREATE.VITRINE_EVENTS.peek", func(_ *nats.Conn, js jetstream.JetStream) error {
			c, cancel := short()
			defer cancel()
			_, err := js.CreateConsumer(c, cfg.EventStream, jetstream.ConsumerConfig{Name: "peek"})
			return err
		}},
		{"relay", "stream delete", "$JS.API.STREAM.DELETE.VITRINE_STATE", deleteStream},
		{"relay", "stream purge", "$JS.API.STREAM.PURGE.VITRINE_STATE", purgeStream},
		{"origin", "stream delete", "$JS.API.STREAM.DELETE.VITRINE_STATE", deleteStream},
		{"origin", "publish on a state subject", "vitrine.0.shop.pub.product.1", func(nc *nats.Conn, _ jetstream.JetStream) error {
			return nc.Publish("vitrine.0.shop.pub.product.1", []byte("{}"))
		}},
	} {
		refused(tc.role, sec.URL, "", tc.what, tc.subject, tc.op)
	}
	// At the leaf node the edge's keys are refused: no central stream through the JetStream
	// domain (reads stay in the region), no consumer on the central stream (what could read a
	// private subject), no publish, no change to the regional mirror.
	refused("edge", leafURL, "central", "stream delete via the leaf node", "$JS.central.API.STREAM.DELETE.VITRINE_STATE", deleteStream)
	refused("edge", leafURL, "central", "a consumer on the central stream via the leaf node", "$JS.central.API.CONSUMER.CREATE.VITRINE_STATE.peek", func(_ *nats.Conn, js jetstream.JetStream) error {
		c, cancel := short()
		defer cancel()
		_, err := js.CreateConsumer(c, cfg.Stream, jetstream.ConsumerConfig{Name: "peek", FilterSubjects: []string{"vitrine.*.*.priv.>", "vitrine._platform.>"}})
		return err
	})
	refused("edge", leafURL, "", "the regional mirror's delete", "$JS.API.STREAM.DELETE.VITRINE_STATE", deleteStream)
	refused("edge", leafURL, "", "publish via the leaf node", "vitrine.0.shop.pub.product.1", func(nc *nats.Conn, _ jetstream.JetStream) error {
		return nc.Publish("vitrine.0.shop.pub.product.1", []byte("{}"))
	})
	// The mirror role manages the region's mirrors only: not a central stream.
	refused("mirror", leafURL, "central", "a central stream's delete", "$JS.central.API.STREAM.DELETE.VITRINE_STATE", deleteStream)
	// The central roles have no user at a region's leaf node: a stolen relay key is refused there.
	for _, role := range []string{"relay", "origin", "admin"} {
		if nc, err := nats.Connect(leafURL, append(sec.Options(t, role), nats.MaxReconnects(0))...); err == nil {
			nc.Close()
			t.Errorf("the %s role connected to the leaf node", role)
		}
	}
	// The regional mirror holds no private subject.
	leafJS, _ := jetstream.New(leafNC)
	if m, err := leafJS.Stream(ctx, cfg.Stream); err != nil {
		t.Fatalf("the regional mirror: %v", err)
	} else if info, err := m.Info(ctx, jetstream.WithSubjectFilter("vitrine.>")); err != nil {
		t.Fatal(err)
	} else {
		for subj := range info.State.Subjects {
			if strings.Contains(subj, ".priv.") {
				t.Fatalf("the regional mirror holds %s", subj)
			}
		}
		if info.State.Subjects["vitrine.0.shop.pub.product.1"] != 1 {
			t.Fatalf("the regional mirror's subjects: %v", info.State.Subjects)
		}
	}

	// Nothing of the above reached the stream.
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatalf("the stream is gone: %v", err)
	}
	if info.State.Msgs != before {
		t.Fatalf("the stream went from %d to %d messages", before, info.State.Msgs)
	}

	// The media bucket (sync/blob): the origin's role creates it and writes an object; an edge
	// reads it, directly and through the leaf node (domain central), at an offset too, and can
	// neither write, overwrite nor delete one.
	originJS, _ := jetstream.New(sec.Connect(t, sec.URL, "origin"))
	media, err := blob.NewObjectStore(ctx, originJS, blob.ObjectStoreConfig{Create: true})
	if err != nil {
		t.Fatalf("origin creates the media bucket: %v", err)
	}
	photo := bytes.Repeat([]byte("vitrine!"), 40000) // 320 KB: three chunks
	stored, err := media.Put(ctx, "media/t1/2026/11/p.jpg", "image/jpeg", bytes.NewReader(photo))
	if err != nil {
		t.Fatalf("origin puts a media file: %v", err)
	}
	if _, err := media.Put(ctx, "media/t1/2026/11/orphan.jpg", "image/jpeg", bytes.NewReader(photo[:10])); err != nil {
		t.Fatal(err)
	}
	if err := media.Walk(ctx, "media/t1/", func(i blob.Info) error {
		if i.Name == "media/t1/2026/11/orphan.jpg" {
			return media.Delete(ctx, i.Name)
		}
		return nil
	}); err != nil {
		t.Fatalf("origin sweeps the media bucket: %v", err)
	}
	// The reads and the refusals run at once (the refused requests each wait for a timeout).
	var wg sync.WaitGroup
	leafEdgeJS, _ := jetstream.New(leafNC) // the regional mirror of the bucket
	edgeJS, _ := jetstream.New(edgeNC)
	for name, js := range map[string]jetstream.JetStream{"direct": edgeJS, "via leaf node": leafEdgeJS} {
		wg.Go(func() {
			var edgeMedia *blob.ObjectStore
			if !eventually(func() bool {
				var err error
				edgeMedia, err = blob.NewObjectStore(ctx, js, blob.ObjectStoreConfig{})
				if err == nil {
					_, err = edgeMedia.Stat(ctx, stored.Name)
				}
				return err == nil
			}) {
				t.Errorf("%s: an edge cannot read the media bucket", name)
				return
			}
			for _, off := range []int64{0, 200000} {
				o, err := edgeMedia.Open(ctx, stored.Name, off)
				if err != nil {
					t.Errorf("%s: an edge opens a media file: %v", name, err)
					return
				}
				got, err := io.ReadAll(o)
				o.Close()
				if err != nil || !bytes.Equal(got, photo[off:]) || o.Info().SHA256 != stored.SHA256 {
					t.Errorf("%s: an edge reads %d bytes from %d: %v", name, len(got), off, err)
				}
			}
			if !eventually(func() bool {
				_, err := edgeMedia.Stat(ctx, "media/t1/2026/11/orphan.jpg")
				return errors.Is(err, blob.ErrNotFound)
			}) {
				t.Errorf("%s: the swept file is still there", name)
			}
		})
	}
	bindMedia := func(js jetstream.JetStream) (*blob.ObjectStore, error) {
		return blob.NewObjectStore(ctx, js, blob.ObjectStoreConfig{Timeout: 500 * time.Millisecond})
	}
	metaSubject := "$O.vitrine-media.M." + base64.URLEncoding.EncodeToString([]byte(stored.Name))
	for _, tc := range []struct {
		url, domain, what, subject string
		op                         func(*nats.Conn, jetstream.JetStream) error
	}{
		{sec.URL, "", "media put", "$O.vitrine-media.C.>", func(_ *nats.Conn, js jetstream.JetStream) error {
			m, err := bindMedia(js)
			if err != nil {
				return err
			}
			c, cancel := short()
			defer cancel()
			_, err = m.Put(c, "media/t1/new.jpg", "image/jpeg", bytes.NewReader(photo))
			return err
		}},
		{sec.URL, "", "overwriting a media file's meta message", metaSubject, func(nc *nats.Conn, _ jetstream.JetStream) error {
			return nc.Publish(metaSubject, []byte(`{"name":"media/t1/2026/11/p.jpg","nuid":"evil"}`))
		}},
		{sec.URL, "", "media delete", "$JS.API.STREAM.MSG.GET.OBJ_vitrine-media", func(_ *nats.Conn, js jetstream.JetStream) error {
			m, err := bindMedia(js)
			if err != nil {
				return err
			}
			c, cancel := short()
			defer cancel()
			return m.Delete(c, stored.Name)
		}},
		{sec.URL, "", "media purge", "$JS.API.STREAM.PURGE.OBJ_vitrine-media", func(_ *nats.Conn, js jetstream.JetStream) error {
			c, cancel := short()
			defer cancel()
			st, err := js.Stream(c, "OBJ_vitrine-media")
			if err != nil {
				return err
			}
			return st.Purge(c)
		}},
		{sec.URL, "", "media bucket delete", "$JS.API.STREAM.DELETE.OBJ_vitrine-media", func(_ *nats.Conn, js jetstream.JetStream) error {
			c, cancel := short()
			defer cancel()
			return js.DeleteStream(c, "OBJ_vitrine-media")
		}},
		{leafURL, "central", "media purge via the leaf node", "$JS.central.API.STREAM.PURGE.OBJ_vitrine-media", func(nc *nats.Conn, _ jetstream.JetStream) error {
			_, err := nc.Request("$JS.central.API.STREAM.PURGE.OBJ_vitrine-media", nil, 500*time.Millisecond)
			return err
		}},
		{leafURL, "", "media write via the leaf node", "$O.vitrine-media.C.evil", func(nc *nats.Conn, _ jetstream.JetStream) error {
			return nc.Publish("$O.vitrine-media.C.evil", photo[:100])
		}},
	} {
		// As refused does, in parallel.
		v := &violations{}
		nc := sec.Connect(t, tc.url, "edge", v.option())
		js, _ := jetstream.New(nc)
		if tc.domain != "" {
			js, _ = jetstream.NewWithDomain(nc, tc.domain)
		}
		wg.Go(func() {
			err := tc.op(nc, js)
			nc.Flush()
			if !v.saw(tc.subject) {
				t.Errorf("edge: %s was not refused (err %v)", tc.what, err)
			}
		})
	}
	wg.Wait()
	if info, err := media.Stat(ctx, stored.Name); err != nil || info != stored {
		t.Fatalf("the media file after the refusals: %+v %v", info, err)
	}
	if err := media.Delete(ctx, stored.Name); err != nil {
		t.Fatalf("origin deletes a media file: %v", err)
	}

	// No credentials, or no client certificate: no connection.
	for name, opts := range map[string][]nats.Option{
		"TLS without credentials":                  {nats.RootCAs(sec.CA), nats.ClientCert(sec.Cert, sec.Key)},
		"credentials without a client certificate": append(sec.Options(t, "edge")[:1], nats.RootCAs(sec.CA)),
	} {
		nc, err := nats.Connect(sec.URL, append(opts, nats.MaxReconnects(0))...)
		if err == nil {
			nc.Close()
			t.Errorf("%s: connected", name)
		}
	}
	if nc, err := nats.Connect(strings.Replace(sec.URL, "tls://", "nats://", 1), append(sec.Options(t, "edge")[:1], nats.MaxReconnects(0))...); err == nil {
		nc.Close()
		t.Error("a plain-text connection was accepted")
	}

	// The refusals are the permissions', not a broken stream: the operators' role may delete it.
	adminJS, _ := jetstream.New(sec.Connect(t, sec.URL, "admin"))
	if err := adminJS.DeleteStream(ctx, cfg.Stream); err != nil {
		t.Fatalf("admin cannot delete the stream: %v", err)
	}
	if _, err := adminJS.Stream(ctx, cfg.Stream); !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Fatal(fmt.Errorf("stream still there after the admin deleted it: %v", err))
	}
}

// snapSink counts what a Follower delivers and its checkpoints.
type snapSink struct {
	sink
	checkpoints atomic.Int64
}

func (s *snapSink) Checkpoint() { s.checkpoints.Add(1) }

// The snapshot bucket under the shipped permissions: the relay's role writes the per-shard
// snapshots (a full pass, then an incremental one replacing them) and reads the previous ones;
// an edge's role bootstraps from them, directly and through the leaf node, and may neither
// write, purge nor delete one.
func TestShippedNATSPermissionsSnapshots(t *testing.T) {
	ctx := context.Background()
	sec := natstest.RunSecure(t, deployDir)
	cfg := feed.Config{}.WithDefaults()
	relayNC := sec.Connect(t, sec.URL, "relay")
	relayJS, _ := jetstream.New(relayNC)
	if _, err := feed.EnsureStream(ctx, relayJS, cfg, "epoch-1"); err != nil {
		t.Fatal(err)
	}
	publish := func(version int64) {
		t.Helper()
		msgs := []feed.Message{change("shop", schema.Pub, fmt.Sprint(version), version), change("shop", schema.Priv, "p", version+1), head("shop", version+1)}
		st, _ := relayJS.Stream(ctx, cfg.Stream)
		var fence uint64
		if m, err := st.GetLastMsgForSubject(ctx, cfg.HeadSubject(0, "shop")); err == nil {
			fence = m.Sequence
		}
		if _, err := feed.Publish(ctx, relayJS, "epoch-1", msgs, cfg.HeadSubject(0, "shop"), fence); err != nil {
			t.Fatalf("relay publishes: %v", err)
		}
	}
	publish(1)
	w := snapshot.NewWriter(relayJS, snapshot.WriterConfig{Feed: cfg, Logger: slog.New(slog.DiscardHandler)})
	if res, err := w.WriteAll(ctx); err != nil || res.Objects != 2 {
		t.Fatalf("relay writes the snapshots: %+v %v", res, err)
	}
	publish(3)
	// A writer taking over reads the previous snapshots from the bucket and replaces them.
	w2 := snapshot.NewWriter(relayJS, snapshot.WriterConfig{Feed: cfg, Logger: slog.New(slog.DiscardHandler)})
	if res, err := w2.WriteAll(ctx); err != nil || res.Incremental != 1 {
		t.Fatalf("relay replaces a snapshot incrementally: %+v %v", res, err)
	}
	publish(5)

	edgeNC := sec.Connect(t, sec.URL, "edge")
	leafURL := sec.StartLeaf(t)
	mirror := runMirror(t, sec, leafURL)
	waitFor(t, "the region's mirrors of the stream and the snapshots", func() bool {
		for _, st := range mirror.Status() {
			if st.Stream != "OBJ_vitrine-media" && (!st.Exists || st.LastSeq < st.SourceLastSeq || st.SourceLastSeq == 0) {
				return false
			}
		}
		return true
	})
	leafNC := sec.Connect(t, leafURL, "edge")
	for name, c := range map[string]struct {
		nc  *nats.Conn
		cfg feed.Config
	}{"direct": {edgeNC, cfg}, "via leaf node": {leafNC, cfg}} {
		js, err := c.cfg.JetStream(c.nc)
		if err != nil {
			t.Fatal(err)
		}
		src, err := snapshot.NewSource(ctx, js, "")
		if err != nil {
			t.Fatalf("%s: an edge binds the snapshot bucket: %v", name, err)
		}
		s := &snapSink{}
		f, err := feed.NewFollower(c.nc, c.cfg, cfg.PublicFilters(nil), s, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		f.UseSnapshots(src)
		fctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { f.Run(fctx); close(done) }()
		waitFor(t, name+" follower's checkpoint", func() bool { return s.checkpoints.Load() > 0 })
		cancel()
		<-done
		if st := f.Stats(); st.FromSnapshot != 1 || st.SnapshotFallbacks != 0 {
			t.Fatalf("%s: follower stats %+v", name, st)
		}
		for _, k := range []string{"shop/pub.product.1", "shop/pub.product.3", "shop/pub.product.5"} {
			if !s.has(k) {
				t.Fatalf("%s: the follower misses %s", name, k)
			}
		}
		if s.has("shop/priv.product.p") {
			t.Fatalf("%s: a private change reached the edge", name)
		}
	}
	for _, tc := range []struct {
		what, subject string
		op            func(*nats.Conn, jetstream.JetStream) error
	}{
		{"snapshot put", "$O.vitrine-snapshots.C.>", func(_ *nats.Conn, js jetstream.JetStream) error {
			c, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
			defer cancel()
			obs, err := js.ObjectStore(c, snapshot.DefaultBucket)
			if err != nil {
				return err
			}
			_, err = obs.PutBytes(c, "shard-0", []byte("evil"))
			return err
		}},
		{"snapshot purge", "$JS.API.STREAM.PURGE.OBJ_vitrine-snapshots", func(nc *nats.Conn, _ jetstream.JetStream) error {
			_, err := nc.Request("$JS.API.STREAM.PURGE.OBJ_vitrine-snapshots", nil, 500*time.Millisecond)
			return err
		}},
		{"snapshot bucket delete", "$JS.API.STREAM.DELETE.OBJ_vitrine-snapshots", func(nc *nats.Conn, _ jetstream.JetStream) error {
			_, err := nc.Request("$JS.API.STREAM.DELETE.OBJ_vitrine-snapshots", nil, 500*time.Millisecond)
			return err
		}},
	} {
		v := &violations{}
		nc := sec.Connect(t, sec.URL, "edge", v.option())
		js, _ := jetstream.New(nc)
		err := tc.op(nc, js)
		nc.Flush()
		if !v.saw(tc.subject) {
			t.Errorf("edge: %s was not refused (err %v)", tc.what, err)
		}
	}
}

// runMirror runs `vitrine mirror`'s work (region.Mirror, domain "eu" as the shipped leaf node
// configuration names it) with the mirror role's key at the leaf node, until the test ends.
func runMirror(t *testing.T, sec *natstest.Secure, leafURL string) *region.Mirror {
	t.Helper()
	m, err := region.New(sec.Connect(t, leafURL, "mirror"), region.Config{Domain: "eu", Interval: 100 * time.Millisecond,
		PruneEvery: 100 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { m.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return m
}
