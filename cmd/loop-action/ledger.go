package main

type ledgerCmd struct {
	runFlags `embed:""`
	JSON     bool `help:"Print the typed events, one JSON object per line."`
}

func (ledgerCmd) Help() string {
	return `Prints what a run recorded, as far as its last checkpoint: the human-readable
run log, or with --json the typed events it was rendered from.

Example:
  loop-action ledger
  loop-action ledger --json | jq -c 'select(.type == "node_failed")'`
}

func (c *ledgerCmd) Run(cl *cli, d *deps) error {
	store, cp, err := c.openRun(cl, d)
	if err != nil {
		return err
	}
	defer store.Close()
	read := store.Log
	if c.JSON {
		read = store.Ledger
	}
	b, err := read(d.ctx, cp.RunID)
	if err != nil {
		return err
	}
	_, err = d.stdout.Write(b)
	return err
}
