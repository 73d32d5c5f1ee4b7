package search

// SearchExhaustive is Search scoring every match, without bounds: tests check that the bounds
// change nothing.
func SearchExhaustive(ix *Index, q Query) Result { return ix.search(q, false) }
