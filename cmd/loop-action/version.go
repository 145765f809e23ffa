package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is set at release with -ldflags "-X main.version=v1.2.3".
var version = ""

// sourceVersion is the version of this source tree, for builds that have
// neither -ldflags nor a module version: the action's image, which the
// Actions runner builds from a copy of the repository without .git and
// without build args. The release process bumps it: the commit a release
// tag points to says that release (v1.2.3), the next one the next
// release's "-dev".
const sourceVersion = "v1.0.0-dev"

type versionCmd struct{}

func (versionCmd) Help() string {
	return `Example:
  loop-action version`
}

func (versionCmd) Run(d *deps) error {
	_, err := fmt.Fprintf(d.stdout, "loop-action %s (%s)\n", buildVersion(), runtime.Version())
	return err
}

// buildVersion is the version this binary reports.
func buildVersion() string {
	info, _ := debug.ReadBuildInfo() // nil when the binary has none
	return deriveVersion(version, info)
}

// deriveVersion is the -ldflags version, else the module version (go
// install …@v1.2.3, or a build in a git checkout, which Go stamps with a
// pseudo-version), else sourceVersion with the VCS revision the build
// recorded, if any, as build metadata.
func deriveVersion(ldflags string, info *debug.BuildInfo) string {
	if ldflags != "" {
		return ldflags
	}
	if info == nil {
		return sourceVersion
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	switch {
	case rev == "":
		return sourceVersion
	case dirty:
		return sourceVersion + "+" + rev + ".dirty"
	}
	return sourceVersion + "+" + rev
}
