// Package migrations holds Vitrine's database schema as numbered SQL files, embedded in the
// binary, and splits them into statements (Split, Files). Files are applied in lexical order by
// the origin's store (store.DB.Migrate): each statement on its own, outside any explicit
// transaction (CockroachDB runs schema changes in explicit transactions only partly, and not
// with other writes), and a file's version is recorded in schema_migrations only after all its
// statements succeeded. A file that failed half-way therefore runs again from its first
// statement, so every statement must be idempotent: CREATE … IF NOT EXISTS, ADD COLUMN IF NOT
// EXISTS, DROP … IF EXISTS, and ADD CONSTRAINT only after DROP CONSTRAINT IF EXISTS of the same
// name. A constraint that code or a later migration refers to by name is named explicitly
// where it is created (never PostgreSQL's generated name, which CockroachDB does not always
// give). These rules are checked by tests (idempotency lint, migrations applied twice, a file
// interrupted after each statement), and every statement parses under CockroachDB's grammar.
//
// The SQL stays in the subset shared by CockroachDB and PostgreSQL 15+: no SERIAL, no triggers,
// no LISTEN/NOTIFY, no advisory locks, no stored procedures. Keys are UUIDs or (tenant_id, id)
// pairs whose integer ids come from the id_alloc table. CockroachDB-only DDL (multi-region
// localities) lives in deploy/cockroachdb as documented SQL.
package migrations

import "embed"

// FS holds the migration files, named NNNN_description.sql.
//
//go:embed *.sql
var FS embed.FS
