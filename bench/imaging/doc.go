// Package imaging measures the two ways of making WordPress's image sub-sizes that issue 16
// compared: the pure-Go path of origin/media/imaging (disintegration/imaging and
// golang.org/x/image, one decode, sizes cascaded from larger ones) against libvips through
// github.com/davidbyttow/govips/v2 (cgo; its thumbnail API, which shrinks JPEGs on load, once
// per size). Both make the same images: the "-scaled" 2560 px image and the six WordPress sizes
// of a 4000×3000 photograph, with the dimensions of origin/media/imaging.Dimensions, metadata
// stripped, as JPEG (quality 82) and as WebP (quality 86).
//
// The libvips side is behind the build tag vips, so that the default build and go vet need
// neither libvips nor cgo. The measurement runs each engine in a child process per run (the test
// binary re-executed) so that peak memory (VmHWM, and the child's getrusage maxrss) is that
// engine's alone:
//
//	make bench-imaging        # deploy/local/ensure-vips.sh, then both engines, 7 runs each
//	go test -tags vips ./bench/imaging -run '^TestMeasure$' -measure -runs 7 -out bench/results/<date>-imaging
//
// Without -measure, the package's tests only check that every engine built in makes the right
// dimensions on a small image (fast; part of make test without the tag).
package imaging
