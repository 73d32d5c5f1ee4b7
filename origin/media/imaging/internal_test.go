package imaging

import (
	"errors"
	"runtime"
	"strings"
	"testing"
)

// TestProtect: a decoder panic, of any value, becomes a KindCorrupt error.
func TestProtect(t *testing.T) {
	for _, p := range []any{"a string", errors.New("an error"), 42} {
		err := protect(func() error { panic(p) })
		if KindOf(err) != KindCorrupt || !strings.Contains(err.Error(), "decoder panic") {
			t.Errorf("panic(%v): %v", p, err)
		}
	}
	if err := protect(func() error { return nil }); err != nil {
		t.Error(err)
	}
}

// TestParseEXIFBounded: tags claiming values far beyond the block are skipped without
// allocating them.
func TestParseEXIFBounded(t *testing.T) {
	b := []byte("II*\x00\x08\x00\x00\x00")
	b = append(b, 2, 0)
	for _, tag := range []uint16{tagModel, tagOrientation} {
		e := make([]byte, 12)
		e[0], e[1] = byte(tag), byte(tag>>8)
		e[2] = 2                                     // ASCII
		e[4], e[5], e[6], e[7] = 0, 0xFF, 0xFF, 0xFF // count
		e[8] = 8
		b = append(b, e...)
	}
	b = append(b, 0, 0, 0, 0)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got := parseEXIF(b)
	runtime.ReadMemStats(&after)
	if got != (exifTags{}) {
		t.Errorf("read %+v", got)
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 64<<10 {
		t.Errorf("allocated %d bytes", d)
	}
	// Cycles and truncation: an IFD pointing past the end, an Exif IFD pointing at itself.
	for _, b := range [][]byte{
		[]byte("II*\x00\xff\xff\xff\xff"),
		[]byte("MM\x00*\x00\x00\x00\x08\x00\x01\x87\x69\x00\x04\x00\x00\x00\x01\x00\x00\x00\x08\x00\x00\x00\x00"),
		[]byte("II*"),
	} {
		_ = parseEXIF(b)
	}
}

// TestIPTC reads extended-length datasets and stops at malformed ones.
func TestIPTC(t *testing.T) {
	r := parseIPTC([]byte("\x1c\x02\x19\x80\x02\x00\x03abc\x1c\x02\x19\x00\x05de"))
	if len(r[25]) != 1 || string(r[25][0]) != "abc" {
		t.Errorf("records = %q", r)
	}
	if got := text([]byte("caf\xe9")); got != "café" {
		t.Errorf("latin-1 = %q", got)
	}
}
