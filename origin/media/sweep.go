package media

import (
	"context"
	"strings"
	"time"

	"vitrine/schema"
	"vitrine/sync/blob"
)

// SweepAge is how long a claim may stay pending or deleted, and a blob stay unnamed by any
// claim, before the sweeper removes it: far longer than any upload request.
const SweepAge = time.Hour

// sweepBatch is how many claims or blobs the sweeper handles per database round trip.
const sweepBatch = 500

// Swept counts what a sweep removed.
type Swept struct {
	// Claims are expired claims removed with their blobs; Orphans blobs that no claim named.
	Claims, Orphans int
}

// Sweep removes what failed or interrupted uploads and deletions left behind, older than age
// at now (SweepAge when age <= 0): first claims pending or deleted since then, with their blobs;
// then the blobs under media/ that no claim names and that were written before then (each
// adopted as a deleted claim first, so that no upload takes its name meanwhile). Several origins
// may sweep at once.
func (s *Service) Sweep(ctx context.Context, now time.Time, age time.Duration) (Swept, error) {
	var out Swept
	if s.cfg.Blobs == nil {
		return out, nil
	}
	if age <= 0 {
		age = SweepAge
	}
	before := now.Add(-age)
	for {
		stale, err := s.db.ExpireMediaFiles(ctx, before, sweepBatch)
		if err != nil {
			return out, err
		}
		byTenant := map[string][]string{}
		for _, f := range stale {
			byTenant[f.TenantID] = append(byTenant[f.TenantID], f.File)
		}
		for tenant, files := range byTenant {
			n, err := s.deleteBlobs(ctx, tenant, files)
			out.Claims += n
			if err != nil {
				return out, err
			}
		}
		if len(stale) < sweepBatch {
			break
		}
	}
	pending := map[string][]string{}
	flush := func(tenant string) error {
		files := pending[tenant]
		delete(pending, tenant)
		adopted, err := s.db.AdoptMediaFiles(ctx, tenant, files)
		if err != nil {
			return err
		}
		n, err := s.deleteBlobs(ctx, tenant, adopted)
		out.Orphans += n
		return err
	}
	err := s.cfg.Blobs.Walk(ctx, "media/", func(info blob.Info) error {
		rest, ok := strings.CutPrefix(info.Name, "media/")
		tenant, file, ok2 := strings.Cut(rest, "/")
		if !ok || !ok2 || !info.Modified.Before(before) {
			return nil
		}
		pending[tenant] = append(pending[tenant], file)
		if len(pending[tenant]) >= sweepBatch {
			return flush(tenant)
		}
		return nil
	})
	if err != nil {
		return out, err
	}
	for tenant := range pending {
		if err := flush(tenant); err != nil {
			return out, err
		}
	}
	return out, nil
}

// deleteBlobs deletes the blobs of a tenant's files whose claims the sweeper holds (deleted),
// then forgets the claims. It stops at the first blob it cannot delete, leaving its claim.
func (s *Service) deleteBlobs(ctx context.Context, tenant string, files []string) (int, error) {
	for i, f := range files {
		if err := s.cfg.Blobs.Delete(ctx, schema.MediaBlobName(tenant, f)); err != nil {
			if i > 0 {
				if ferr := s.db.ForgetMediaFiles(ctx, tenant, files[:i]); ferr != nil {
					return i, ferr
				}
			}
			return i, err
		}
	}
	if len(files) == 0 {
		return 0, nil
	}
	return len(files), s.db.ForgetMediaFiles(ctx, tenant, files)
}
