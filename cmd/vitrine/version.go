package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strconv"

	"github.com/VictoriaMetrics/metrics"

	"vitrine/schema"
)

// build describes the running binary: its module version, the VCS revision it was built from,
// the Go release, and the change-message encoding it reads and writes.
type build struct {
	Version, Revision, Time string
	// Modified: the work tree had uncommitted changes at build time.
	Modified  bool
	GoVersion string
	// ChangeSchema is schema.ChangeSchemaVersion, the stream's change encoding.
	ChangeSchema int
}

// buildFrom reads a build from runtime/debug's BuildInfo (ok false: none was embedded). Values
// the build did not record read "unknown": `go build -buildvcs=false`, and `go test`, embed no
// VCS settings.
func buildFrom(bi *debug.BuildInfo, ok bool) build {
	b := build{Version: "unknown", Revision: "unknown", Time: "unknown", GoVersion: runtime.Version(), ChangeSchema: schema.ChangeSchemaVersion}
	if !ok || bi == nil {
		return b
	}
	if v := bi.Main.Version; v != "" {
		b.Version = v
	}
	if bi.GoVersion != "" {
		b.GoVersion = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// currentBuild is the build of this binary.
func currentBuild() build { return buildFrom(debug.ReadBuildInfo()) }

// String is the build as `vitrine version` prints it.
func (b build) String() string {
	rev := b.Revision
	if b.Modified {
		rev += " (modified)"
	}
	return fmt.Sprintf("vitrine %s\n  revision       %s\n  built from     %s\n  go             %s\n  change schema  %d\n",
		b.Version, rev, b.Time, b.GoVersion, b.ChangeSchema)
}

// runVersion prints the build (`vitrine version`).
func runVersion(w io.Writer, args []string) error {
	f := newFlags("version")
	if err := f.Parse(args); err != nil {
		return err
	}
	_, err := io.WriteString(w, currentBuild().String())
	return err
}

// observeBuild registers vitrine_build_info{version,revision,modified,goversion,change_schema} 1:
// the build every process of a fleet runs, to be joined with its other series.
func observeBuild(set *metrics.Set) {
	b := currentBuild()
	set.GetOrCreateGauge(fmt.Sprintf(`vitrine_build_info{version=%q,revision=%q,modified=%q,goversion=%q,change_schema=%q}`,
		b.Version, b.Revision, strconv.FormatBool(b.Modified), b.GoVersion, strconv.Itoa(b.ChangeSchema)), func() float64 { return 1 })
}
