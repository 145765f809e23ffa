package main

import (
	"fmt"
	"path/filepath"

	"github.com/loop-action/loop-action/internal/runner"
)

type exportCmd struct {
	runFlags `embed:""`
	Out      string `placeholder:"DIR" help:"Parent directory of the export (default: .loop/export in the loop root)."`
}

func (exportCmd) Help() string {
	return `Writes <loop>-success/ for a run that succeeded: SKILL.md, EVIDENCE.md, the
config that converged, out/ ([export] paths), run.sh, run.cmd and a manifest
with the sha256 of every file. A run that did not succeed has no export.

Example:
  loop-action export --out dist/`
}

func (c *exportCmd) Run(cl *cli, d *deps) error {
	cfg, err := cl.load(d)
	if err != nil {
		return err
	}
	store, cp, err := c.openRun(cl, d)
	if err != nil {
		return err
	}
	defer store.Close()
	root := cl.root(d)
	dir := runner.ExportDir(root)
	if c.Out != "" {
		dir = c.Out
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(d.env.wd, dir)
		}
	}
	k, err := cl.checkout(d)
	if err != nil {
		return err
	}
	path, err := runner.WriteExport(d.ctx, store, cfg, cp, root, dir, buildVersion(), d.env.vars, checkoutOf(k, cfg))
	if err != nil {
		return &usageError{err}
	}
	_, err = fmt.Fprintln(d.stdout, path)
	return err
}
