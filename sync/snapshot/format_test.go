package snapshot

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"vitrine/sync/feed"
)

func sampleSnapshot(t testing.TB, n int) (Header, []Record, []byte) {
	t.Helper()
	h := Header{Epoch: "epoch-1", Created: time.Unix(1700000000, 123).UTC(), Shard: "3", Seq: uint64(10 * (n + 1)),
		Taken: time.Unix(1700000100, 0).UTC(), FullAt: time.Unix(1700000050, 0).UTC(), ListedAt: 7, Shards: []string{"0", "3"},
		Heads: []Head{{Log: "alpha", Version: 42}, {Log: "beta", Version: 7}}}
	recs := make([]Record, n)
	for i := range recs {
		recs[i] = Record{Seq: uint64(10*i + 3), Subject: fmt.Sprintf("vitrine.3.alpha.pub.product.%d", i),
			Data: []byte(fmt.Sprintf(`{"schema":1,"log":"alpha","kind":"product","id":"%d","vis":"pub","version":%d,"data":{"name":"p%d"}}`, i, i+1, i))}
	}
	b, err := Encode(h, recs)
	if err != nil {
		t.Fatal(err)
	}
	h.Records = uint64(n)
	return h, recs, b
}

func readAll(s *Snapshot) ([]Record, error) {
	var out []Record
	err := s.Records(func(r Record) error { out = append(out, r); return nil })
	return out, err
}

func TestRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 1000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			h, recs, b := sampleSnapshot(t, n)
			s, err := Open(b)
			if err != nil {
				t.Fatal(err)
			}
			got := s.Header()
			if got.Epoch != h.Epoch || !got.Created.Equal(h.Created) || got.Shard != h.Shard || got.Seq != h.Seq ||
				!got.Taken.Equal(h.Taken) || !got.FullAt.Equal(h.FullAt) || got.ListedAt != h.ListedAt ||
				!slices.Equal(got.Shards, h.Shards) || !slices.Equal(got.Heads, h.Heads) || got.Records != h.Records {
				t.Fatalf("header %+v, want %+v", got, h)
			}
			out, err := readAll(s)
			if err != nil {
				t.Fatal(err)
			}
			if len(out) != len(recs) {
				t.Fatalf("%d records, want %d", len(out), len(recs))
			}
			for i := range recs {
				if out[i].Seq != recs[i].Seq || out[i].Subject != recs[i].Subject || string(out[i].Data) != string(recs[i].Data) {
					t.Fatalf("record %d = %+v, want %+v", i, out[i], recs[i])
				}
			}
		})
	}
}

func TestEncodeRefusesDisorder(t *testing.T) {
	_, err := Encode(Header{}, []Record{{Seq: 5, Subject: "a"}, {Seq: 5, Subject: "b"}})
	if err == nil {
		t.Fatal("records with equal sequences were encoded")
	}
}

func TestCorruption(t *testing.T) {
	_, _, good := sampleSnapshot(t, 200)
	mod := func(f func(b []byte) []byte) []byte { return f(slices.Clone(good)) }
	// reseal recomputes the length and checksum: the framing is right, the content is not.
	reseal := func(b []byte) []byte {
		b = b[:len(b)-checksumLen]
		binary.BigEndian.PutUint64(b[len(Magic)+4:], uint64(len(b)+checksumLen))
		return binary.BigEndian.AppendUint64(b, xxhashSum(b))
	}
	cases := []struct {
		name string
		b    []byte
		want error
	}{
		{"flipped byte in the records", mod(func(b []byte) []byte { b[len(b)-40] ^= 0x20; return b }), ErrCorrupt},
		{"flipped byte in the header", mod(func(b []byte) []byte { b[preambleLen+3] ^= 1; return b }), ErrCorrupt},
		{"flipped byte in the checksum", mod(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), ErrCorrupt},
		{"truncated by one byte", good[:len(good)-1], ErrTruncated},
		{"truncated to half", good[:len(good)/2], ErrTruncated},
		{"truncated to the magic", good[:4], ErrTruncated},
		{"empty", nil, ErrTruncated},
		{"bytes after the end", append(slices.Clone(good), 0), ErrCorrupt},
		{"bad magic", mod(func(b []byte) []byte { b[0] = 'X'; return b }), ErrCorrupt},
		{"unknown version", mod(func(b []byte) []byte { binary.BigEndian.PutUint32(b[len(Magic):], 99); return b }), ErrVersion},
		{"header length past the end", mod(func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[len(Magic)+12:], 1<<30)
			return reseal(b)
		}), ErrCorrupt},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Open(c.b)
			if err == nil {
				_, err = readAll(s)
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			if Reason(err) == "unreachable" || Reason(err) == "" {
				t.Fatalf("reason %q for %v", Reason(err), err)
			}
		})
	}
	// A resealed snapshot whose compressed records were damaged passes Open and fails Records.
	bad := mod(func(b []byte) []byte { b[len(b)-checksumLen-20] ^= 0xff; return reseal(b) })
	s, err := Open(bad)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readAll(s); err == nil {
		t.Fatal("damaged records decoded")
	}
}

func TestCheck(t *testing.T) {
	h, _, b := sampleSnapshot(t, 3)
	s, err := Open(b)
	if err != nil {
		t.Fatal(err)
	}
	now := h.Taken.Add(time.Hour)
	cases := []struct {
		name    string
		epoch   string
		created time.Time
		shard   string
		maxAge  time.Duration
		want    error
	}{
		{"matching", h.Epoch, h.Created, "3", 2 * time.Hour, nil},
		{"any shard", h.Epoch, h.Created, "", 0, nil},
		{"other epoch", "epoch-2", h.Created, "3", 0, ErrEpoch},
		{"recreated stream", h.Epoch, h.Created.Add(time.Second), "3", 0, ErrStream},
		{"other shard", h.Epoch, h.Created, "4", 0, ErrShard},
		{"too old", h.Epoch, h.Created, "3", 30 * time.Minute, ErrTooOld},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := s.Check(c.epoch, c.created, c.shard, c.maxAge, now)
			if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
}

func TestRecordSet(t *testing.T) {
	var s recordSet
	s.index = map[string]int{}
	for _, r := range []Record{{Seq: 1, Subject: "a", Data: []byte("1")}, {Seq: 2, Subject: "b", Data: []byte("2")}, {Seq: 3, Subject: "a", Data: []byte("3")}, {Seq: 2, Subject: "b", Data: []byte("old")}, {Seq: 4, Subject: "c", Data: []byte("4")}} {
		s.add(r)
	}
	got := s.live()
	want := []string{"b=2", "a=3", "c=4"}
	var have []string
	for _, r := range got {
		have = append(have, r.Subject+"="+string(r.Data))
	}
	if !slices.Equal(have, want) {
		t.Fatalf("live %v, want %v", have, want)
	}
}

func sampleAnnexes() []feed.Annex {
	return []feed.Annex{
		{Kind: feed.AnnexSearchIndex, Log: "alpha", Version: 42, Params: "EUR", Data: []byte("an index image")},
		{Kind: feed.AnnexSearchIndex, Log: "beta", Version: 7, Data: nil},
		{Kind: "something-newer", Log: "alpha", Version: -1, Params: "p", Data: make([]byte, 100_000)},
	}
}

// A snapshot's annexes come back as written, after the records, which read as without them.
func TestAnnexesRoundTrip(t *testing.T) {
	h, recs, _ := sampleSnapshot(t, 50)
	for _, as := range [][]feed.Annex{nil, sampleAnnexes()} {
		b, err := Encode(h, recs, as...)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Open(b)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Annexes()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(as) {
			t.Fatalf("%d annexes, want %d", len(got), len(as))
		}
		for i, a := range as {
			g := got[i]
			if g.Kind != a.Kind || g.Log != a.Log || g.Version != a.Version || g.Params != a.Params || string(g.Data) != string(a.Data) {
				t.Fatalf("annex %d = %+v, want %+v", i, g, a)
			}
		}
		out, err := readAll(s)
		if err != nil || len(out) != len(recs) {
			t.Fatalf("%d records, %v", len(out), err)
		}
	}
}

// A malformed annex section in a snapshot whose checksum holds (a writer's bug) is refused with
// ErrCorrupt, and the Source refuses the snapshot: the edge bootstraps from the stream.
func TestAnnexesCorrupt(t *testing.T) {
	h, recs, _ := sampleSnapshot(t, 5)
	b, err := Encode(h, recs, sampleAnnexes()...)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(b)
	if err != nil {
		t.Fatal(err)
	}
	for name, annex := range map[string][]byte{
		"count over the bytes": {0xff, 0x01},
		"cut in the data":      s.annex[:len(s.annex)-1],
		"trailing bytes":       append(append([]byte(nil), s.annex...), 0),
	} {
		bad := &Snapshot{h: s.h, body: s.body, annex: annex}
		if _, err := bad.Annexes(); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s: Annexes = %v, want ErrCorrupt", name, err)
		}
	}
}

// A snapshot of format 2 (no annexes), as the previous build's writer left it in the bucket,
// still reads: the same header and records, no annexes.
func TestFormat2Read(t *testing.T) {
	h, recs, b := sampleSnapshot(t, 20)
	// Format 3 with no annexes is format 2 plus the header's last byte (annex length 0).
	hl := binary.BigEndian.Uint32(b[len(Magic)+12:])
	if b[preambleLen+int(hl)-1] != 0 {
		t.Fatal("the header does not end with an annex length of 0")
	}
	v2 := append(slices.Clone(b[:preambleLen+int(hl)-1]), b[preambleLen+int(hl):len(b)-checksumLen]...)
	binary.BigEndian.PutUint32(v2[len(Magic):], 2)
	binary.BigEndian.PutUint64(v2[len(Magic)+4:], uint64(len(v2)+checksumLen))
	binary.BigEndian.PutUint32(v2[len(Magic)+12:], hl-1)
	v2 = binary.BigEndian.AppendUint64(v2, xxhashSum(v2))
	s, err := Open(v2)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Header(); got.Seq != h.Seq || got.Records != h.Records || !slices.Equal(got.Heads, h.Heads) {
		t.Fatalf("header %+v, want %+v", got, h)
	}
	if as, err := s.Annexes(); err != nil || len(as) != 0 {
		t.Fatalf("annexes %+v, %v", as, err)
	}
	out, err := readAll(s)
	if err != nil || len(out) != len(recs) || string(out[19].Data) != string(recs[19].Data) {
		t.Fatalf("%d records, %v", len(out), err)
	}
}
