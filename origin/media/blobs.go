package media

import (
	"bytes"
	"context"
	"errors"
	"time"

	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
	"vitrine/sync/blob"
)

// cleanupTimeout bounds the deletion of a failed upload's blobs and claims, which runs even when
// the request's context has ended.
const cleanupTimeout = 30 * time.Second

// claimAndPut claims the names of one of the candidates filesOf(n) (n = 1, 2, … up to tries)
// and writes their blobs. It returns the files written. On a failure nothing is left behind:
// the blobs written are deleted and the claims released.
func (s *Service) claimAndPut(ctx context.Context, rq *handler.Request, tries int, filesOf func(n int) []blobFile) ([]blobFile, error) {
	n, _, err := s.db.ClaimMediaFiles(ctx, rq.Info, tries, func(n int) []string { return names(filesOf(n)) })
	if err != nil {
		return nil, err
	}
	files := filesOf(n)
	for i, f := range files {
		if err := s.put(ctx, rq.Info, f); err != nil {
			s.cfg.Logger.Warn("media: blob write failed", "tenant", rq.Info.Slug, "file", f.name, "err", err)
			s.discard(ctx, rq.Info, files[:i+1])
			return nil, errStore
		}
	}
	return files, nil
}

// put writes one claimed file. A blob already under the name holds other bytes only if an
// earlier owner of the name left it behind (its claim is gone, or this one could not be
// taken): it is replaced.
func (s *Service) put(ctx context.Context, t *schema.Tenant, f blobFile) error {
	name := schema.MediaBlobName(t.ID, f.name)
	_, err := s.cfg.Blobs.Put(ctx, name, f.mime, bytes.NewReader(f.data))
	if errors.Is(err, blob.ErrExists) {
		if err := s.cfg.Blobs.Delete(ctx, name); err != nil {
			return err
		}
		_, err = s.cfg.Blobs.Put(ctx, name, f.mime, bytes.NewReader(f.data))
	}
	return err
}

// discard deletes the blobs of files and then releases their claims: an upload whose record
// was not stored. What it cannot delete the sweeper removes later.
func (s *Service) discard(ctx context.Context, t *schema.Tenant, files []blobFile) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	for _, f := range files {
		if err := s.cfg.Blobs.Delete(ctx, schema.MediaBlobName(t.ID, f.name)); err != nil {
			s.cfg.Logger.Warn("media: blob of a failed upload not deleted; the sweeper will", "tenant", t.Slug, "file", f.name, "err", err)
			return // the claims stay, so the sweeper finds the blobs
		}
	}
	if err := s.db.ReleaseMediaFiles(ctx, t, names(files)); err != nil {
		s.cfg.Logger.Warn("media: claims of a failed upload not released; the sweeper will", "tenant", t.Slug, "err", err)
	}
}

// afterFailedWrite cleans up after the transaction storing files failed: unless its outcome is
// unknown (it may have committed, and the files be named by a record), the files are discarded.
func (s *Service) afterFailedWrite(ctx context.Context, t *schema.Tenant, files []blobFile, err error) {
	if errors.Is(err, store.ErrOutcomeUnknown) {
		return // the sweeper decides, from the claims, once the outcome is settled
	}
	s.discard(ctx, t, files)
}

// remove deletes the blobs of a deleted attachment (files: its claims, marked deleted in its
// transaction), then forgets the claims.
func (s *Service) remove(ctx context.Context, t *schema.Tenant, files []string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	for _, f := range files {
		if err := s.cfg.Blobs.Delete(ctx, schema.MediaBlobName(t.ID, f)); err != nil {
			s.cfg.Logger.Warn("media: blob of a deleted attachment not deleted; the sweeper will", "tenant", t.Slug, "file", f, "err", err)
			return
		}
	}
	if err := s.db.ForgetMediaFiles(ctx, t.ID, files); err != nil {
		s.cfg.Logger.Warn("media: claims of a deleted attachment not forgotten; the sweeper will", "tenant", t.Slug, "err", err)
	}
}

func names(files []blobFile) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.name
	}
	return out
}
