// Package migrations holds Vitrine's database schema as numbered SQL files, embedded in the
// binary. Files are applied in lexical order, each once, each in its own transaction; applied
// versions are recorded in schema_migrations.
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
