// Package crdbcheck holds, in its tests only, the check that Vitrine's SQL parses under
// CockroachDB's own grammar (github.com/cockroachdb/cockroachdb-parser, Apache-licensed): every
// statement of every migration, and every distinct statement the store executed during a test
// run, as recorded in the directory named by VITRINE_SQL_RECORD (see store.RecordSQLParam).
// make test runs it last, after the rest of the suite recorded what it executed.
//
// The parser is a large dependency (about three CPU minutes to compile cold on the project's
// 2-core machines), so it is imported here and nowhere else, and this package is tested without
// the race detector. What the grammar cannot see (DDL inside transactions, generated constraint
// names, storage parameters, isolation levels, advisory locks) is handled in the migrations and
// the store and listed in the README's CockroachDB section.
package crdbcheck
