package snapshot

import (
	"encoding/binary"
	"fmt"

	"vitrine/sync/feed"
)

// A snapshot's annexes (format 3) follow its compressed records, uncompressed (what they hold is
// compact already: a search index image is mostly compressed posting blocks), inside the
// checksum:
//
//	count (uvarint), then per annex: kind, log (strings), version (varint), params (string),
//	data (uvarint length, bytes)
//
// The header gives the section's length. An annex is derived state, never the source of truth:
// a reader that cannot use one ignores it.

// Limits of the annex section a decoder enforces.
const (
	// maxAnnexes bounds how many annexes a snapshot may carry.
	maxAnnexes = 1 << 20
	// MaxAnnexData is the largest annex.
	MaxAnnexData = 1 << 30
)

// appendAnnexes appends the annex section of as to b.
func appendAnnexes(b []byte, as []feed.Annex) ([]byte, error) {
	if len(as) == 0 {
		return b, nil
	}
	if len(as) > maxAnnexes {
		return nil, fmt.Errorf("snapshot: %d annexes, over %d", len(as), maxAnnexes)
	}
	b = binary.AppendUvarint(b, uint64(len(as)))
	for _, a := range as {
		if len(a.Kind) > maxString || len(a.Log) > maxString || len(a.Params) > maxString || len(a.Data) > MaxAnnexData {
			return nil, fmt.Errorf("snapshot: annex %s of %s too large", a.Kind, a.Log)
		}
		b = appendString(b, a.Kind)
		b = appendString(b, a.Log)
		b = binary.AppendVarint(b, a.Version)
		b = appendString(b, a.Params)
		b = binary.AppendUvarint(b, uint64(len(a.Data)))
		b = append(b, a.Data...)
	}
	return b, nil
}

// Annexes returns the snapshot's annexes (none for a version 2 snapshot). Their Data are slices
// of the snapshot's bytes. Its errors wrap ErrCorrupt; it never panics, whatever the bytes hold.
func (s *Snapshot) Annexes() ([]feed.Annex, error) {
	if len(s.annex) == 0 {
		return nil, nil
	}
	r := &headerReader{b: s.annex}
	n := r.uvarint("annex count")
	// Every annex takes at least five bytes.
	if r.err == nil && (n > maxAnnexes || n > uint64(len(r.b))/5) {
		r.fail("annex count")
	}
	var out []feed.Annex
	for i := uint64(0); i < n && r.err == nil; i++ {
		a := feed.Annex{Kind: r.string("annex kind"), Log: r.string("annex log"), Version: r.varint("annex version"), Params: r.string("annex params")}
		a.Data = r.bytes("annex data")
		if r.err == nil {
			a.Data = a.Data[:len(a.Data):len(a.Data)]
			out = append(out, a)
		}
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("annex trailing bytes")
	}
	if r.err != nil {
		return nil, r.err
	}
	return out, nil
}
