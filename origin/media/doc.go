// Package media is the write side of the CMS media library (WordPress's attachments
// controller): uploads (a raw body with Content-Disposition, or multipart/form-data), updates,
// deletion, post-processing (create-image-subsizes) and image edits, under the /cms/v2/media
// routes of schema/routes_media.go. Attachments are posts of type attachment (schema.Attachment
// holds their file facts); their files are blobs (sync/blob) that edges serve.
//
// An upload is sniffed by content (never by its name: origin/media/imaging), stripped of its
// metadata and turned upright (imaging.Clean), scaled to WordPress's big-image threshold and cut
// into WordPress's sub-sizes under the imaging memory Budget, then stored:
//
//  1. its file names are claimed in the database (store.ClaimMediaFiles), in a transaction of
//     their own: content-addressed ("2026/11/photo-9f86d081884c.jpg", sub-sizes
//     "…-9f86d081884c-150x150.jpg") and, when another attachment already owns the name,
//     suffixed -2, -3 as WordPress does;
//  2. its blobs are written;
//  3. the attachment is stored, its claims bound to it, in one transaction.
//
// A failure after 1 deletes the blobs written and releases the claims; a crash leaves them to
// the sweeper (Sweep, run by the origin's maintenance), which removes claims left pending or
// deleted for an hour with their blobs, and blobs no claim names that are older than an hour.
// Deleting an attachment (force=true only: media have no trash) marks its claims deleted in its
// transaction and removes its blobs after the commit.
//
// # Invariants
//
//   - A blob is written only under a name its writer claimed first, so no request ever deletes a
//     blob another attachment owns; a name is never reused while an old blob may hold it.
//   - Every blob an attachment names was written before the attachment was committed.
//   - Bad input is a 4xx in WordPress's shape, never a 500: types are refused by sniffing, sizes
//     and pixel counts are bounded before decoding (MaxUploadBytes, imaging.Limits), decoding is
//     bounded in memory by the Budget (503 with Retry-After when it is full). The one 500 is
//     WordPress's: an upload whose sub-sizes could not all be made in time is kept with the
//     sizes made, and answered 500 rest_upload_unknown_error with X-WP-Upload-Attachment-ID so
//     that the client resumes with post-process.
//   - An attachment is public (replicated to edges) only while its status is inherit and its
//     parent is public or absent (schema.Post.Public); the store keeps that in step with the
//     parent.
package media
