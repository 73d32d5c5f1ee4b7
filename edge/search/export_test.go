package search

// SearchExhaustive is Search scoring every match, without bounds: tests check that the bounds
// change nothing.
func SearchExhaustive(ix *Index, q Query) Result { return ix.search(q, false) }

// DiffIndex compares two indexes field by field: "" when they are equal in every internal field.
func DiffIndex(a, b *Index) string { return diffIndex(a, b) }
