// Package files answers the public media files of a store (uploads and their sub-sizes, under
// schema.UploadsPath) at an edge: the bytes come from a blob.Store, what the file is (its blob
// name, type, size, digest, date) from the replica, which the caller has already looked up.
//
// # Overview
//
// Server.Serve answers GET and HEAD for one file with its Content-Type, Content-Length, a strong
// ETag (the SHA-256 of the bytes), Last-Modified, "Cache-Control: public, max-age=31536000,
// immutable" (file names are content-addressed: a name never names other bytes) and
// Accept-Ranges. It evaluates preconditions as RFC 9110 section 13.2.2 orders them (If-Match, else
// If-Unmodified-Since: 412; If-None-Match, else If-Modified-Since: 304) before touching the
// store, then Range:
//
//   - one range, in any of its forms (bytes=a-b, a-, -n), is answered 206 with Content-Range;
//     a range set none of whose ranges is satisfiable 416 with "Content-Range: bytes */size";
//   - several satisfiable ranges are answered 200 with the whole file (RFC 9110 14.2 lets a
//     server ignore Range; multipart/byteranges would buy little for media and is the classic
//     amplification vector);
//   - a malformed Range, another unit, a Range on HEAD, or an If-Range that does not match (a
//     strong ETag or the exact Last-Modified) are ignored: 200 with the whole file.
//
// Files up to Config.MaxCachedBytes are kept in a bounded in-memory cache (ristretto, keyed by
// blob name, a byte budget; never invalidated, only evicted): the first request reads the blob
// whole (concurrent first requests share one read), checks its SHA-256 against the replica's and
// stores it; later requests are answered from memory. Larger files are streamed from the store
// with fasthttp's SetBodyStream, from the range's first byte, never read whole (an object that
// is an open file, FileObject, is handed to fasthttp as one, which sends it with sendfile(2));
// a HEAD for such a file asks the store whether it is there (Stat) and reads nothing. At most
// Config.MaxStreams reads from the store run at once.
//
// Every file is sent with "X-Content-Type-Options: nosniff". A file whose type a browser could
// run as a document (anything but raster images, audio, video, PDF and plain text: SVG, HTML, XML
// and unknown types) is also sent with "Content-Disposition: attachment" and a sandboxing
// Content-Security-Policy, so that a file opened at the store's address can never script it.
//
// # Errors
//
// Errors are answered in the commerce interface's shape (the uploads path is not a CMS route),
// with "Cache-Control: no-store":
//
//   - a method other than GET or HEAD: 405 with "Allow: GET, HEAD";
//   - a blob the store lacks while the replica lists the file: 404 with Retry-After: 2. Edges
//     learn of a file from the replication stream and read its bytes from the blob store, which
//     may be mirrored to the edge's region later than the stream: the file is expected shortly,
//     so the answer is not cached and says when to retry;
//   - any other store failure, an open that takes longer than Config.OpenTimeout, all stream
//     slots taken, or stored bytes that disagree with the replica (size or digest): 503 with
//     Retry-After: 1. Such a disagreement is logged as an error: it is never served, since an
//     immutable answer would keep wrong bytes in every cache downstream for a year.
//
// # Invariants
//
//   - A cache hit allocates nothing (measured by the package's tests).
//   - A streamed answer holds one store reader, closed (and its slot released) when fasthttp
//     closes the body stream: after the body is written, or the connection failed.
//   - Memory: the cache's budget plus, per concurrent fill, one file of at most MaxCachedBytes;
//     a stream holds only its store reader and fasthttp's copy buffer.
//   - Serve keeps nothing of the *fasthttp.RequestCtx after it returns.
package files
