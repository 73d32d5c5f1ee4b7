package sitehealth

import (
	"context"
	"errors"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema/migrations"
)

// DatabaseDetails are the facts of the database test.
type DatabaseDetails struct {
	Reachable bool `json:"reachable"`
	// RoundTripMS is one query's round trip on a pooled connection.
	RoundTripMS float64 `json:"round_trip_ms"`
	// Server is the server's version text.
	Server string `json:"server,omitempty"`
	// Migration is the newest migration the database has; Expected the newest this build
	// embeds.
	Migration string `json:"migration,omitempty"`
	Expected  string `json:"migration_expected"`
	Pool      Pool   `json:"pool"`
}

// Pool is the connection pool's state (store.PoolStats).
type Pool struct {
	Acquired int32 `json:"acquired"`
	Idle     int32 `json:"idle"`
	Total    int32 `json:"total"`
	Max      int32 `json:"max"`
	// EmptyAcquires counts acquisitions that waited for a connection; AcquireWaitMS is their
	// total wait.
	EmptyAcquires int64   `json:"empty_acquires"`
	AcquireWaitMS float64 `json:"acquire_wait_ms"`
}

// expectedMigration is the newest migration this build embeds.
func expectedMigration() string {
	files, err := migrations.Files()
	if err != nil || len(files) == 0 {
		return ""
	}
	return files[len(files)-1].Version
}

// database is the database test: a ping, one query's round trip with the server's version and
// the newest applied migration, and the pool's state.
func (s *Service) database(_ *fasthttp.RequestCtx, _ *handler.Request) Result {
	return s.checkDatabase()
}

func (s *Service) checkDatabase() Result {
	res := Result{Test: "database", Badge: performance, Status: Good, Label: "Your database is reachable and up to date"}
	d := DatabaseDetails{Expected: expectedMigration()}
	ctx, cancel := bounded(s.cfg.DatabaseTimeout)
	defer cancel()
	err := s.db.Ping(ctx)
	var facts store.ServerFacts
	if err == nil {
		start := time.Now()
		facts, err = s.db.ServerFacts(ctx)
		d.RoundTripMS = ms(time.Since(start))
	}
	st := s.db.PoolStats()
	d.Pool = Pool{Acquired: st.Acquired, Idle: st.Idle, Total: st.Total, Max: st.Max, EmptyAcquires: st.EmptyAcquires, AcquireWaitMS: ms(st.AcquireWait)}
	res.Details = &d
	intro := p("The origin writes every change to the database and reads staff data from it. Edges never use it: they keep serving their replicas while it is away.")
	if err != nil {
		s.log.Warn("site health: the database did not answer", "err", err)
		why := "refused or dropped the connection"
		if errors.Is(err, context.DeadlineExceeded) {
			why = "did not answer within " + seconds(s.cfg.DatabaseTimeout)
		}
		res.Status, res.Label = Critical, "Your database is unreachable"
		res.Description = intro + p("The database %s. Writes, sign-ins and staff reads fail until it answers.", why)
		res.Actions = p("Check the database server and the origin's <code>--database-url</code>; the origin's log has the error.")
		return res
	}
	d.Reachable, d.Server, d.Migration = true, facts.Server, facts.Migration
	var notes []string
	notes = append(notes, esc(facts.Server), "round trip "+esc(fmtMS(d.RoundTripMS)),
		esc("migration "+orNone(facts.Migration)+" (this build expects "+orNone(d.Expected)+")"),
		esc(poolText(d.Pool)))
	switch {
	case facts.Migration < d.Expected:
		res.Status, res.Label = Critical, "Your database is missing migrations"
		res.Actions = p("Run <code>vitrine migrate</code>.")
	case facts.Migration > d.Expected:
		res.Status, res.Label = Recommended, "Your database has migrations this origin does not know"
		res.Actions = p("Upgrade this origin to the release that wrote them.")
	case time.Duration(d.RoundTripMS*float64(time.Millisecond)) > s.cfg.SlowDatabase:
		res.Status, res.Label = Recommended, "Your database is slow to answer"
		notes = append(notes, esc("a round trip should take less than "+s.cfg.SlowDatabase.String()))
	case d.Pool.Max > 0 && d.Pool.Acquired >= d.Pool.Max:
		res.Status, res.Label = Recommended, "The database connection pool is exhausted"
		notes = append(notes, "every connection is in use: requests wait for one")
	}
	res.Description = intro + list(notes)
	return res
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func fmtMS(v float64) string { return formatFloat(v) + " ms" }

func poolText(p Pool) string {
	return "pool: " + itoa(int64(p.Acquired)) + " in use, " + itoa(int64(p.Idle)) + " idle, " + itoa(int64(p.Max)) + " at most; " +
		plural(p.EmptyAcquires, "wait") + " for a connection"
}
