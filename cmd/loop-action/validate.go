package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/phrase"
)

type validateCmd struct {
	JSON bool `help:"Print the diagnostics as a JSON array."`
}

func (validateCmd) Help() string {
	return `Reports every problem at once, as file:line:col: message. Warnings do not fail
validation; a provider's unset environment variables are warnings here and
errors before a run. Exits 0 when the config is valid, 2 when it is not.

Example:
  loop-action validate -c .github/loop.toml`
}

func (v *validateCmd) Run(c *cli, d *deps) error {
	cfg, err := c.load(d)
	var cfgErr *loop.ConfigError
	var ds loop.Diagnostics
	switch {
	case errors.As(err, &cfgErr):
		ds = cfgErr.Diagnostics
	case err != nil:
		return err
	default:
		ds = append(cfg.Warnings, cfg.CheckEnv(d.env.lookup, loop.Warning)...)
	}
	if v.JSON {
		if err := writeJSON(d, struct {
			Valid       bool             `json:"valid"`
			Diagnostics loop.Diagnostics `json:"diagnostics"`
		}{cfgErr == nil, nonNil(ds)}); err != nil {
			return err
		}
	} else {
		fmt.Fprint(d.stdout, ds.String())
	}
	if cfgErr != nil {
		return exitCodeError(exitUsage)
	}
	if !v.JSON {
		fmt.Fprintf(d.stdout, "%s: valid: loop %q, %s, %s, %s\n", cfg.File, cfg.Name,
			phrase.Plural(len(cfg.Goals), "goal", "goals"), phrase.Plural(len(cfg.Nodes), "node", "nodes"), phrase.Plural(len(ds), "warning", "warnings"))
	}
	return nil
}

func nonNil(ds loop.Diagnostics) loop.Diagnostics {
	if ds == nil {
		return loop.Diagnostics{}
	}
	return ds
}

func writeJSON(d *deps, v any) error {
	enc := json.NewEncoder(d.stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
