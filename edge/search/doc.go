// Package search is the storefront's product search: an in-memory, relevance-ranked, typo-
// tolerant full-text index of one store's public products, with filters, sorts, pagination and
// autocomplete suggestions. Edges keep one Index per tenant beside the replica's snapshot and
// answer GET /api/search and /api/search/autocomplete from it.
//
// # Overview
//
// An Index is immutable. With applies a batch of upserts and deletions and returns a new Index
// that shares all untouched structure with the old one, so a read engine applies a batch to the
// current Index and swaps the pointer atomically, as it does with its snapshots: readers hold an
// Index for as long as they like and never see a half-applied batch. Build makes the first Index
// of a catalog in one pass (a bootstrap), much faster than With: it tokenises ranges of the
// catalog in parallel (GOMAXPROCS goroutines, at most 8, from 4096 documents) and builds the
// words, the suggestion sets and the documents' records concurrently; the result does not depend
// on the parallelism.
//
// Text is tokenised the same way at index and query time: lowercase, diacritics removed (NFKD
// without combining marks, plus a few letters such as ß and ø folded by a table), split on
// anything that is not a letter or a digit. Each word of the title and description gets a
// posting list of (document, title frequency, description frequency) ordered by the document's
// internal ordinal (a dense number, reused after deletions).
//
// # Compressed lists
//
// Posting lists, suggestion sets and category sets are compressed persistent lists: runs of up
// to 64 consecutive entries encoded into byte blocks, the blocks in a persistent B+tree keyed by
// their first entry (a list of one block has no tree). A posting is one varint when its
// frequencies are (1, 0), (0, 1) or (1, 1): the distance from the previous ordinal shifted left
// by two, or'ed with the frequency code, so a posting of a common word takes one byte; other
// frequencies add two bytes. A suggestion entry is the id's distance from the previous entry's
// (or its rank and id when the rank changes) and the ordinal; a category set is ordinal
// distances. A batch gathers each touched list's changes and applies them at commit: every block
// a change falls in is decoded once, merged with its changes and re-encoded (split evenly when
// it overflows, or leaving the blocks before full when the changes append, as new ordinals do);
// a block left under a quarter full merges with the block before it when both fit in one. Build
// makes full blocks, encoding each list into one allocation. Queries decode a posting list a
// block at a time into a buffer of the query's own, and suggestions decode in place only the
// entries they return, so suggestions from one set cost O(limit) whatever its size.
// Measured on 20k catalog products the index takes about half the heap of the B+trees of
// uncompressed entries it replaced (BenchmarkIndexHeap).
//
// # Matching and ranking
//
// The words of a query are ORed. Stop words ("the", "and", ...) are dropped from a query that
// has other words. Each remaining query word matches:
//
//   - the indexed word equal to it (exact);
//   - when there is none and it has at least Options.FuzzyMinLen characters (default 4) and is not
//     a number, the indexed words at Damerau-Levenshtein distance 1 (typo): found through a map
//     from the hashes of each indexed word's one-character deletions to the words, which With
//     maintains as words come and go; at most 16, the most frequent;
//   - for the last query word, unless the text ends with a separator, the indexed words it is a
//     prefix of (search-as-you-type): at most 32, the most frequent.
//
// A matched query word scores a level, title +3, then exact +2, prefix +1 or typo +0, plus its
// BM25 score (k1 1.2, b 0.75, per field with its own length normalisation and document
// frequency, the title weighted 4 and the description 1) squashed into [0, 1) by x/(x+8); when
// several indexed words match it, the best counts. A document scores 100 per matched query word
// plus those values. Hence, strictly: documents matching more query words rank first; among those
// a word found in the title beats one found only in the description; an exact word beats a
// prefix, which beats a typo; BM25 orders the rest. Ties go to the newest document, then the
// lowest id. A query without text lists the documents passing the filters, newest first for
// Relevance.
//
// Ranked by relevance, a query scores exactly only the matches that can enter the page. A match
// is first bounded from its postings alone: value's formula at the shortest title and
// description of the index (Index keeps lower bounds of both, exact after Build, lowered by
// With), maximised over a word's expansions and summed over the matched words in the order the
// score sums them, plus a margin far above rounding. Once the page is full, a match whose bound
// is below the page's worst score is only counted, without reading its record when the query
// has no filters; as bounds never fall below scores, results are exactly those of scoring every
// match (TestBoundsExact). A query of one posting list walks it directly; several are merged a
// window of 1024 ordinals at a time, bounds summed per document in the window, instead of a heap
// operation per posting.
//
// Suggest answers autocomplete from per-word and per-prefix (up to 3 characters) suggestion sets
// of title words, each a persistent B+tree kept in rank order, so that a prefix query reads only
// the first entries.
//
// # Images
//
// An edge bootstrapping a large store spends a good part of its time in Build, tokenising. So a
// snapshot carries, beside the documents, the image of their index (Index.AppendImage), and an
// edge loads the index from it (LoadImage), about five times faster than Build on one core: an
// image holds what Build derives by tokenising, and LoadImage derives from the documents what is
// cheap (the records, ids and category sets, the fuzzy map). An image is, in order:
//
//   - a header: "VSIX"; the image format (a big-endian uint32, bumped when the tokeniser, the
//     records or the lists change: TestImageGolden fails until it is); a fingerprint of what the
//     content depends on besides the code the format versions (block and token sizes, the
//     Unicode tables, what the tokeniser and the codecs make of a probe); a hash (of
//     xxhash64s) of the documents, after Build's deduplication, in ordinal order, every field
//     the index reads, and of the options (ImageDocsHash); the fuzzy minimum and the number of
//     documents;
//   - per document: its title and description token counts and its title key;
//   - the vocabulary in order, then per word its posting list and, for a word of titles, its
//     suggestion set; the prefixes in order, then their suggestion sets. A list is its number of
//     entries (for a word's suggestion set, implied: the documents with the word in their title),
//     its length in bytes and its blocks as Build encodes them (split evenly into full blocks);
//   - the xxhash64 of all of it.
//
// Varints are in their shortest encoding and lists in Build's blocks, so an image is canonical:
// LoadImage accepts exactly the bytes AppendImage writes for the index it returns.
//
//   - LoadImage(ix.AppendImage(nil), docs, o), ix being BuildWithOptions(docs, o), is ix in
//     every field, keeping the documents' strings and category slices as Build does; each list is
//     copied out of the image into one allocation of its own, so the image can be dropped.
//   - Only an index that New or Build made has an image: With (but for a rebuild) makes indexes
//     that have none (ErrNoImage).
//   - An image of another format or tokeniser, of other options or over other documents is
//     refused with ErrImageStale; a malformed or corrupted one with ErrImage, never with a panic
//     or an allocation out of proportion to the image and the documents. Every list is checked
//     (counts, encoding, order, ordinals) and what the lists say is checked against the
//     documents and each other as far as it can be without tokenising (frequencies against
//     token counts, word suggestion sets against title postings, first words against title
//     keys); the checksum covers the rest.
//
// # Invariants
//
//   - An Index never changes once returned: With and Build return new values; every method is
//     safe for concurrent use without locks.
//   - With costs O(changed documents × (their distinct words + title prefixes + categories) ×
//     (block + log catalog)): it re-encodes the touched blocks (at most 64 entries each) and
//     path-copies their B+tree nodes and persistent map entries, never a whole list. A word whose frequencies did not change in an updated document is not
//     touched. A batch of at least 256 documents that is also at least as large as the index is
//     applied by rebuilding, which costs the same order and is faster.
//   - An index reached through any sequence of With answers every Search and Suggest exactly as
//     Build over the same documents (internal ordinals differ; results and scores do not).
//   - The index keeps a Doc's strings and category slice, not the Doc: those must not be modified
//     afterwards. It holds each document as its record plus 80 bytes of those references (a Doc
//     is 144), and Get makes a Doc back from them.
package search
