// Package report writes the results of a bench run into a folder: summary.md (Markdown, for
// people and the README), results.json (machine-readable, one key per scenario) and one SVG file
// per plot.
//
// The plots are small hand-written SVG (lines, bars, log-scaled axes): the well-kept Go plotting
// library (gonum.org/v1/plot) pulls in a font and image stack that this suite does not need, and
// hand-written SVG keeps the output byte-for-byte deterministic for golden tests.
//
// # Invariants
//
//   - Write's output depends only on its arguments: the same Meta and sections give the same
//     bytes (maps in Data are sorted by encoding/json; floats are formatted with fixed precision
//     in plots).
//   - A plot file name is a plain file name inside the results folder, never a path.
package report
