package snapshot

import (
	"testing"

	"github.com/cespare/xxhash/v2"

	"vitrine/schema"
)

func xxhashSum(b []byte) uint64 { return xxhash.Sum64(b) }

// FuzzOpen feeds hostile bytes to the decoder: Open, Check and Records must return errors, never
// panic, and a snapshot that opens must decode the records its header counts or fail.
func FuzzOpen(f *testing.F) {
	for _, n := range []int{0, 1, 5} {
		_, _, b := sampleSnapshot(f, n)
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	recs := changeRecords(f)[:40]
	if b, err := Encode(Header{Epoch: "e", Shard: "0", Seq: 100}, recs); err == nil {
		f.Add(b)
	}
	if b, err := Encode(Header{Epoch: "e", Shard: "0", Seq: 100}, recs[:3], sampleAnnexes()...); err == nil {
		f.Add(b)
	}
	f.Add([]byte(Magic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Open(b)
		if err == nil {
			s.Check("e", s.Header().Created, "", 0, s.Header().Taken)
			n := uint64(0)
			if err := s.Records(func(Record) error { n++; return nil }); err == nil && n != s.Header().Records {
				t.Fatalf("%d records decoded, header says %d", n, s.Header().Records)
			}
			m := uint64(0)
			cerr := s.Changes(func(string, *schema.Change, []byte) error { m++; return nil })
			if (cerr == nil) != (n == s.Header().Records) || cerr == nil && m != n {
				t.Fatalf("Changes read %d records (%v), Records %d", m, cerr, n)
			}
			if as, err := s.Annexes(); err == nil {
				// What decodes encodes back to the same section.
				if ab, err := appendAnnexes(nil, as); err != nil || string(ab) != string(s.annex) {
					t.Fatalf("annexes %+v re-encode to %x (%v), stored %x", as, ab, err, s.annex)
				}
			}
		}
		// The same bytes resealed (right length and checksum) reach the header and record
		// decoders whatever they hold.
		if len(b) >= preambleLen {
			c := append([]byte(nil), b...)
			copy(c, Magic)
			c[len(Magic)], c[len(Magic)+1], c[len(Magic)+2], c[len(Magic)+3] = 0, 0, 0, Version
			total := uint64(len(c) + checksumLen)
			for i := range 8 {
				c[len(Magic)+4+i] = byte(total >> (56 - 8*i))
			}
			sum := xxhash.Sum64(c)
			for i := range 8 {
				c = append(c, byte(sum>>(56-8*i)))
			}
			if s, err := Open(c); err == nil {
				s.Records(func(Record) error { return nil })
				s.Changes(func(string, *schema.Change, []byte) error { return nil })
				s.Annexes()
			}
		}
	})
}
