package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/jackc/pgx/v5"
)

// RecordSQLParam is the database URL parameter that makes a DB record the SQL it executes:
// with ?vitrine.record_sql=<dir>, every distinct SQL text the pool runs (queries, statements
// of migrations, BEGIN and COMMIT) is kept in memory and written to dir when the DB is closed,
// one file per text, named by its hash, so that many processes and databases can record into
// one directory. Tests set it (storetest, from VITRINE_SQL_RECORD) and a final step parses
// every recorded statement with CockroachDB's grammar. Open removes the parameter from the
// connection settings; the dotted name is a custom setting PostgreSQL accepts, so other
// clients given the same URL still connect.
const RecordSQLParam = "vitrine.record_sql"

// sqlRecorder is a pgx tracer that remembers each distinct SQL text once. It is cheap on the
// hot path: one map lookup under a mutex per statement.
type sqlRecorder struct {
	dir  string
	mu   sync.Mutex
	seen map[string]struct{}
}

func newSQLRecorder(dir string) *sqlRecorder {
	return &sqlRecorder{dir: dir, seen: map[string]struct{}{}}
}

func (r *sqlRecorder) add(sql string) {
	r.mu.Lock()
	if _, ok := r.seen[sql]; !ok {
		r.seen[sql] = struct{}{}
	}
	r.mu.Unlock()
}

// TraceQueryStart records the statement of a Query, QueryRow or Exec.
func (r *sqlRecorder) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	r.add(data.SQL)
	return ctx
}

// TraceQueryEnd does nothing.
func (r *sqlRecorder) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TraceBatchStart does nothing; the batch's statements are recorded one by one.
func (r *sqlRecorder) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

// TraceBatchQuery records a statement of a batch.
func (r *sqlRecorder) TraceBatchQuery(_ context.Context, _ *pgx.Conn, data pgx.TraceBatchQueryData) {
	r.add(data.SQL)
}

// TraceBatchEnd does nothing.
func (r *sqlRecorder) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// flush writes the recorded texts that dir does not hold yet.
func (r *sqlRecorder) flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return err
	}
	var errs []error
	for sql := range r.seen {
		sum := sha256.Sum256([]byte(sql))
		name := filepath.Join(r.dir, hex.EncodeToString(sum[:12])+".sql")
		if _, err := os.Stat(name); err == nil {
			continue
		}
		// Written under a temporary name and renamed: a reader never sees half a file, and
		// two writers of the same text write the same bytes.
		tmp, err := os.CreateTemp(r.dir, ".record-*")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		_, werr := tmp.WriteString(sql)
		cerr := tmp.Close()
		if err := errors.Join(werr, cerr); err != nil {
			os.Remove(tmp.Name())
			errs = append(errs, err)
			continue
		}
		if err := os.Rename(tmp.Name(), name); err != nil && !errors.Is(err, fs.ErrExist) {
			errs = append(errs, err)
		}
	}
	clear(r.seen)
	return errors.Join(errs...)
}
