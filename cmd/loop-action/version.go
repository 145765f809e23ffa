package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = ""

type versionCmd struct{}

func (versionCmd) Help() string {
	return `Example:
  loop-action version`
}

func (versionCmd) Run(d *deps) error {
	_, err := fmt.Fprintf(d.stdout, "loop-action %s (%s)\n", buildVersion(), runtime.Version())
	return err
}

// buildVersion is the -ldflags version, else the module version, else the
// VCS revision the binary was built from, else "devel".
func buildVersion() string {
	if version != "" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
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
		return "devel"
	case dirty:
		return "devel-" + rev + "-dirty"
	}
	return "devel-" + rev
}
