package main

import (
	"regexp"
	"runtime/debug"
	"testing"
)

func TestDeriveVersion(t *testing.T) {
	t.Parallel()
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	rev := "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name    string
		ldflags string
		info    *debug.BuildInfo
		want    string
	}{
		{"ldflags first", "v1.4.2", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.1"}, Settings: vcs(rev, "false")}, "v1.4.2"},
		{"module version", "", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.1"}}, "v1.4.1"},
		{"pseudo-version from a checkout", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20260101120000-0123456789ab+dirty"}}, "v0.0.0-20260101120000-0123456789ab+dirty"},
		{"source and revision", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "false")}, sourceVersion + "+0123456789ab"},
		{"source and a modified tree", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "true")}, sourceVersion + "+0123456789ab.dirty"},
		{"source alone: the image, built without .git or build args", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, sourceVersion},
		{"no build info", "", nil, sourceVersion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := deriveVersion(tt.ldflags, tt.info); got != tt.want {
				t.Errorf("deriveVersion(%q, …) = %q, want %q", tt.ldflags, got, tt.want)
			}
		})
	}
}

// TestSourceVersionIsSemver: the version kept in the source is one a
// release can carry (vMAJOR.MINOR.PATCH, maybe -pre), never "devel".
func TestSourceVersionIsSemver(t *testing.T) {
	t.Parallel()
	if !regexp.MustCompile(`^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`).MatchString(sourceVersion) {
		t.Errorf("sourceVersion %q is not a semantic version", sourceVersion)
	}
}
