package blob

import (
	"bytes"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Every name ValidName accepts is a clean local path of the allowed bytes: it can never reach
// outside a store's directory, nor collide with FS's own file names ('~').
func FuzzValidName(f *testing.F) {
	for _, s := range []string{"a", "media/t1/2026/11/photo-9f86d081884c-150x150.jpg", "../x", "a/../b", "/a", "a//b",
		"a/", `a\b`, "a\x00", ".", "..", ".a/..b/...", "a~", "é", strings.Repeat("a/", 300)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if ValidName(name) != nil {
			return
		}
		if len(name) > MaxNameLen || !filepath.IsLocal(name) || path.Clean(name) != name || strings.ContainsAny(name, "~\\\x00 ") {
			t.Fatalf("ValidName accepted %q", name)
		}
		for _, seg := range strings.Split(name, "/") {
			if seg == "" || seg == "." || seg == ".." || len(seg) > MaxSegmentLen {
				t.Fatalf("ValidName accepted %q (segment %q)", name, seg)
			}
		}
	})
}

// The FS header decoder refuses garbage without panicking, and reads back what it wrote.
func FuzzDecodeHeader(f *testing.F) {
	good, err := encodeHeader(Info{Size: 42, SHA256: strings.Repeat("ab", 32), ContentType: `text/plain; charset="utf-8"`, Modified: time.Unix(1, 2).UTC()})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(fsMagic + `{"size":-1}` + "\n"))
	f.Add(bytes.Repeat([]byte{' '}, headerSize))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := decodeHeader(b)
		if err != nil {
			return
		}
		if h.Size < 0 || len(h.SHA256) != 64 {
			t.Fatalf("decoded %+v", h)
		}
		again, err := encodeHeader(Info{Size: h.Size, SHA256: h.SHA256, ContentType: h.ContentType, Modified: h.Modified})
		if err != nil {
			return // a content type Put would have refused
		}
		if h2, err := decodeHeader(again); err != nil || h2.Size != h.Size || h2.SHA256 != h.SHA256 || h2.ContentType != h.ContentType {
			t.Fatalf("round trip: %+v %v, want %+v", h2, err, h)
		}
	})
}

// Meta messages come from the bucket, which any writer with publish rights can fill: the
// decoder and the chunk index never panic, and an accepted meta message is self-consistent.
func FuzzParseMeta(f *testing.F) {
	f.Add([]byte(`{"name":"a","bucket":"b","nuid":"N","size":3,"chunks":1,"digest":"SHA-256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU=","metadata":{"vitrine-chunk-seqs":"Bw"},"options":{"max_chunk_size":131072}}`), "Bw", 1)
	f.Add([]byte(`{"name":"a","deleted":true}`), "", 0)
	f.Add([]byte(`{"name":"a","nuid":"N","size":0,"chunks":0,"digest":"SHA-256=","options":{"link":{"bucket":"x"}}}`), "AQEB", 3)
	f.Fuzz(func(t *testing.T, data []byte, index string, n int) {
		m, err := parseMeta(data, time.Time{})
		if err == nil && !m.Deleted {
			if m.info.Size < 0 || len(m.info.SHA256) != 64 || (m.Size == 0) != (m.Chunks == 0) {
				t.Fatalf("accepted %+v", m)
			}
		}
		seqs, err := decodeSeqs(index, n)
		if err != nil {
			return
		}
		if len(seqs) != n {
			t.Fatalf("%d sequences for %d chunks", len(seqs), n)
		}
		for i := 1; i < len(seqs); i++ {
			if seqs[i] <= seqs[i-1] {
				t.Fatalf("sequences not increasing: %v", seqs)
			}
		}
	})
}
