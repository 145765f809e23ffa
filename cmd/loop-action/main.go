// Command loop-action runs agent loops on a git repository: agents do the
// work, the runner measures the result, a deterministic gate decides each
// goal, and hard budgets decide when to stop.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	e, err := startup(os.Args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "loop-action: %v\n", err)
		os.Exit(exitInternal)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], e, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
