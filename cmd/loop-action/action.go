package main

import "github.com/loop-action/loop-action/internal/action"

type actionCmd struct{}

func (actionCmd) Help() string {
	return `The GitHub Action's entrypoint (the Docker image runs "loop-action action"):
reads the inputs (INPUT_*), the GITHUB_* variables and the event payload,
runs or resumes the loop on the state branch, and reports through the PR
comment, the commit status loop/<name>, the job summary, annotations and
outputs. With INPUT_MODE=authorize it only decides, from the event and the
API, whether the job that runs the pull request's code may follow, and
sets the outputs proceed and head-sha. See docs/action.md.

Example (what the runner does):
  INPUT_GITHUB-TOKEN=... GITHUB_EVENT_NAME=pull_request GITHUB_EVENT_PATH=event.json loop-action action`
}

func (actionCmd) Run(d *deps) error {
	getenv := func(k string) string { v, _ := d.env.lookup(k); return v }
	err := action.Main(d.ctx, action.Env{Getenv: getenv, Environ: d.env.vars, Stdout: d.stdout, Now: d.now, Version: buildVersion(), Git: action.DeliveryGit{}})
	if err != nil {
		return reportedError{err} // the job log has it; exitCode maps it
	}
	return nil
}
