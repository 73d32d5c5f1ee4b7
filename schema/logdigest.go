package schema

import (
	"encoding/binary"
	"strings"
)

// LogDigest summarises the live state of one log as the stream holds it: per visibility, how many
// subjects hold a live entity state (tombstones excluded) and the wrapping sum of a 64-bit hash
// of each one's key and version. The relay keeps it for every log it publishes and stamps it on
// every head marker; a replica keeps the same sums over what it applied, so "at version N" can
// be checked instead of assumed. Sums are order-independent and support removal, so both sides
// maintain them incrementally.
type LogDigest struct {
	PubCount  int64  `json:"pub_count"`
	PubSum    uint64 `json:"pub_sum"`
	PrivCount int64  `json:"priv_count"`
	PrivSum   uint64 `json:"priv_sum"`
}

// DigestTerm is one live entity state's contribution to a LogDigest: FNV-1a over the key and the
// version, finished with a 64-bit mixer so that nearby versions spread over the whole range.
func DigestTerm(key string, version int64) uint64 {
	return digestFinish(fnvString(fnvOffset, key), version)
}

// DigestTermOf is DigestTerm of the change key vis.kind.id, without building the key: replicas
// call it for every change they apply.
func DigestTermOf(vis Visibility, kind Kind, id string, version int64) uint64 {
	h := fnvString(fnvOffset, string(vis))
	h = fnvString(h, ".")
	h = fnvString(h, string(kind))
	h = fnvString(h, ".")
	return digestFinish(fnvString(h, id), version)
}

const fnvOffset = uint64(14695981039346656037)

func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

func digestFinish(h uint64, version int64) uint64 {
	var v [8]byte
	binary.LittleEndian.PutUint64(v[:], uint64(version))
	for _, b := range v {
		h ^= uint64(b)
		h *= 1099511628211
	}
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

// Add counts the live state at key (its subject suffix "<vis>.<kind>.<id>") and version.
func (d *LogDigest) Add(vis Visibility, key string, version int64) {
	d.AddTerm(vis, DigestTerm(key, version))
}

// Remove takes back a state Add counted.
func (d *LogDigest) Remove(vis Visibility, key string, version int64) {
	d.RemoveTerm(vis, DigestTerm(key, version))
}

// AddTerm counts a live state by its term (DigestTerm, DigestTermOf).
func (d *LogDigest) AddTerm(vis Visibility, term uint64) {
	if vis == Pub {
		d.PubCount++
		d.PubSum += term
		return
	}
	d.PrivCount++
	d.PrivSum += term
}

// RemoveTerm takes back a state AddTerm counted.
func (d *LogDigest) RemoveTerm(vis Visibility, term uint64) {
	if vis == Pub {
		d.PubCount--
		d.PubSum -= term
		return
	}
	d.PrivCount--
	d.PrivSum -= term
}

// Matches reports whether a replica's digest agrees with a head's on the visibilities the replica
// follows: the public ones always, the private ones when withPriv (the origin's full replica).
func (d LogDigest) Matches(head LogDigest, withPriv bool) bool {
	if d.PubCount != head.PubCount || d.PubSum != head.PubSum {
		return false
	}
	return !withPriv || (d.PrivCount == head.PrivCount && d.PrivSum == head.PrivSum)
}

// SlotVis returns the visibility of a change key ("pub.product.12" is public).
func SlotVis(key string) Visibility {
	if strings.HasPrefix(key, string(Priv)+".") {
		return Priv
	}
	return Pub
}

// DigestState is a log's digest as the relay recorded it, settled through a version.
type DigestState struct {
	Digest LogDigest
	// Version is the log version the digest is settled through.
	Version int64
}

// SlotChange is one settled change of a live state: the version its key now holds, or its
// removal (a tombstone).
type SlotChange struct {
	Key     string
	Version int64
	Deleted bool
}

// AdvanceDigest applies published changes, in version order, to a log's digest. prev holds the
// versions of the live states among the changes' keys before them (a key absent has no live
// state). It returns the new digest and each key's final state.
func AdvanceDigest(d LogDigest, prev map[string]int64, rows []OutboxRow) (LogDigest, []SlotChange) {
	cur := make(map[string]int64, len(rows))
	live := make(map[string]bool, len(rows))
	for k, v := range prev {
		cur[k], live[k] = v, true
	}
	var order []string
	seen := make(map[string]bool, len(rows))
	for _, r := range rows {
		vis := SlotVis(r.Key)
		if live[r.Key] {
			d.Remove(vis, r.Key, cur[r.Key])
		}
		if r.Deleted {
			live[r.Key] = false
		} else {
			d.Add(vis, r.Key, r.Version)
			live[r.Key] = true
		}
		cur[r.Key] = r.Version
		if !seen[r.Key] {
			seen[r.Key] = true
			order = append(order, r.Key)
		}
	}
	out := make([]SlotChange, 0, len(order))
	for _, k := range order {
		out = append(out, SlotChange{Key: k, Version: cur[k], Deleted: !live[k]})
	}
	return d, out
}
