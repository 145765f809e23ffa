package runner

import (
	"maps"
	"os"
	"strconv"
	"strings"

	"github.com/loop-action/loop-action/internal/environ"
)

// gitOverrides are the git settings every check, the metrics command and
// any git the runner starts run with: no fsmonitor hook (core.fsmonitor
// names a command git runs on status, diff, add...) and no hooks at all
// (a hooks path that cannot exist). They are given as command-line
// configuration, which overrides the repository's, the user's and the
// system's.
var gitOverrides = [][2]string{
	{"core.fsmonitor", "false"},
	{"core.hooksPath", os.DevNull},
}

// GitEnv returns env (nil is this process's environment, as for
// os/exec) with gitOverrides appended to its GIT_CONFIG_COUNT,
// GIT_CONFIG_KEY_n and GIT_CONFIG_VALUE_n: the settings already there are
// kept, in order, and renumbered without gaps (git refuses an environment
// with one), and the overrides come last, so they win.
func GitEnv(env []string) []string {
	if env == nil {
		env = os.Environ()
	}
	cfg := maps.Collect(environ.Env(env).All())
	out := environ.Env(env).WithoutFunc(func(k string) bool {
		return k == "GIT_CONFIG_COUNT" || strings.HasPrefix(k, "GIT_CONFIG_KEY_") || strings.HasPrefix(k, "GIT_CONFIG_VALUE_")
	})
	n, err := strconv.Atoi(cfg["GIT_CONFIG_COUNT"])
	if err != nil || n < 0 {
		n = 0
	}
	i := 0
	add := func(k, v string) {
		out = append(out, "GIT_CONFIG_KEY_"+strconv.Itoa(i)+"="+k, "GIT_CONFIG_VALUE_"+strconv.Itoa(i)+"="+v)
		i++
	}
	for j := range min(n, len(env)) { // a count past the entries there are finds nothing more
		k, okk := cfg["GIT_CONFIG_KEY_"+strconv.Itoa(j)]
		v, okv := cfg["GIT_CONFIG_VALUE_"+strconv.Itoa(j)]
		if okk && okv {
			add(k, v)
		}
	}
	for _, o := range gitOverrides {
		add(o[0], o[1])
	}
	return append(out, "GIT_CONFIG_COUNT="+strconv.Itoa(i))
}
