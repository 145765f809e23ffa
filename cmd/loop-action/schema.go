package main

import "github.com/loop-action/loop-action/internal/loop"

type schemaCmd struct{}

func (schemaCmd) Help() string {
	return `Prints the JSON Schema (draft 2020-12) of the loop config, generated from the
same types the loader uses. Editors that read #:schema (taplo, Even Better
TOML) use it for completion and checks.

Example:
  loop-action schema > loop.schema.json`
}

func (schemaCmd) Run(d *deps) error {
	b, err := loop.Schema()
	if err != nil {
		return err
	}
	_, err = d.stdout.Write(b)
	return err
}
