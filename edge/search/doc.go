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
// of a catalog in one pass (a bootstrap), much faster than With.
//
// Text is tokenised the same way at index and query time: lowercase, diacritics removed (NFKD
// without combining marks, plus a few letters such as ß and ø folded by a table), split on
// anything that is not a letter or a digit. Each word of the title and description gets a
// posting list of (document, title frequency, description frequency), kept in a persistent
// B+tree ordered by the document's internal ordinal.
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
// Suggest answers autocomplete from per-word and per-prefix (up to 3 characters) suggestion sets
// of title words, each a persistent B+tree kept in rank order, so that a prefix query reads only
// the first entries.
//
// # Invariants
//
//   - An Index never changes once returned: With and Build return new values; every method is
//     safe for concurrent use without locks.
//   - With costs O(changed documents × (their distinct words + title prefixes + categories) ×
//     log catalog): it path-copies the touched B+tree nodes and persistent map entries, never a
//     whole posting list. A word whose frequencies did not change in an updated document is not
//     touched. A batch of at least 256 documents that is also at least as large as the index is
//     applied by rebuilding, which costs the same order and is faster.
//   - An index reached through any sequence of With answers every Search and Suggest exactly as
//     Build over the same documents (internal ordinals differ; results and scores do not).
//   - The index keeps the *Doc it was given: a Doc must not be modified afterwards.
package search
