package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/runner/isolate"
	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/workspace"
)

// errWallClock is the cause a run's context ends with when the wall-clock
// budget is spent.
var errWallClock = errors.New("the run's wall-clock budget is spent")

// run is one process's hold on a run.
type run struct {
	opts       Options
	cfg        *loop.Config
	cp         *state.Checkpoint
	rec        *ledger.Recorder
	generation string // why the run starts afresh, if it does
	now        func() time.Time
	started    time.Time     // when this process took the run
	baseWall   time.Duration // wall clock the run had used before
	maxIter    int
	providers  map[string]Provider
	collector  Collector
	hasher     *workspace.Hasher
	history    string // the history file
	tmp        string // prompt files
	escalate   string // why the run escalates, once a reason arose
	iso        *isolate.Manager
	mask       func(string) string
	objects    *memory.Storage   // the root's content before waves of isolated nodes (rootGuard)
	files      *FileCommands     // the job's file commands, put back after each wave
	finished   bool              // the run was over when this process took it: saves keep the stored workspace
	interrupt  bool              // the run was stopped mid-iteration: its last save reads nothing of the loop root
	stored     bool              // the store holds a workspace of this checkpoint's generation
	edits      sync.Mutex        // openai builders apply their edits one at a time (openai.go)
	refusals   map[string]string // why each openai builder's last edits were not applied, for its next prompt

	guardCache guardCache // what the scans of the guarded paths read (protect.go)

	// ctx is the run's context (its deadline and signals) for the walks of
	// the loop root made outside a step that takes one (an openai node's
	// context files), and guards what the guards' scans and reverts run
	// under (see wallContext); drive bounds both.
	ctx, guards context.Context

	lastBlobs workspace.Blobs  // what the last measurement's snapshot hashed, for the memory trace
	memory    []state.Memory   // earlier runs' memory entries, the latest first (memory.go)
	leave     *state.Memory    // the entry the next save stores
	recording *state.Recording // the iteration's recording the next save stores (recording.go)

	uncarried    workspace.Uncarried // ignored files as the session started (uncarried.go)
	uncarriedErr error               // they could not be listed
}

// Run opens a session on the run opts.RunID (see Open), runs it and closes
// it: a convenience for a caller with nothing to amend.
func Run(ctx context.Context, opts Options) (_ Outcome, err error) {
	s, err := Open(ctx, opts)
	if err != nil {
		return Outcome{}, err
	}
	defer func() { err = errors.Join(err, s.Close()) }()
	return s.Run(ctx)
}

// Run starts the session's run, or resumes it from its checkpoint, and
// drives it until a stop rule fires, it pauses for review, or ctx is
// cancelled (then the checkpoint is saved and the outcome is cancelled).
// A run that is already over is reported without running anything.
// Amendments not yet committed are committed first. A session runs once.
//
// The job's file-command files that opts.Env names (GITHUB_ENV,
// GITHUB_OUTPUT…) are recorded first and put back after every wave and
// when Run returns; agents, checks and the metrics command never get those
// variables. A file that cannot be put back makes Run fail.
func (s *Session) Run(ctx context.Context) (_ Outcome, err error) {
	if s.ran {
		return Outcome{}, fmt.Errorf("runner: run %q was already run in this session", s.opts.RunID)
	}
	s.ran = true
	if err := s.Commit(ctx); err != nil {
		return Outcome{}, err
	}
	s.held.show(s.opts.Progress)
	r := prepare(s.opts)
	if r.files, err = GuardFileCommands(s.opts.Env); err != nil {
		return Outcome{}, err
	}
	defer func() {
		if ferr := r.files.Restore(); ferr != nil {
			err = errors.Join(err, ferr)
		}
	}()
	r.cp, r.generation = s.start(r), s.generation
	r.stored = s.cp != nil && s.generation == "" // resumed: its saves stored the workspace
	initMaps(r.cp)
	s.cp = r.cp // what the session reports from now on
	r.baseWall = r.cp.Spend.WallClock
	r.mask = Masker(s.opts.Config, s.opts.Env)
	r.rec = ledger.NewRecorder(r.cp.LedgerEvents, r.now, r.opts.Progress)
	r.rec.Mask(r.mask)
	r.maxIter = iterationCap(s.opts)
	if over := r.over(); over {
		if r.cp.Status != state.Success {
			return outcome(r.cp, false, ""), nil
		}
		path, err := r.ensureExport(ctx)
		return outcome(r.cp, false, path), err
	}
	defer os.RemoveAll(r.tmp)
	return r.drive(ctx)
}

// start is the checkpoint the run goes on from: the one loaded, or a new
// one for a run without one or a new generation.
func (s *Session) start(r *run) *state.Checkpoint {
	switch {
	case s.cp == nil:
		return newCheckpoint(r.opts, r.now())
	case s.generation != "":
		cp := newCheckpoint(r.opts, r.now())
		cp.LastCommentID = s.cp.LastCommentID // commands already handled stay handled
		return cp
	}
	return s.cp
}

func prepare(opts Options) *run {
	opts.Env = WithoutFileCommands(opts.Env)
	r := &run{opts: opts, cfg: opts.Config, now: opts.Now, providers: opts.Providers, collector: opts.Collector}
	r.started = r.now()
	r.ctx, r.guards = context.Background(), context.Background() // until drive bounds them
	r.hasher = workspace.NewHasherWith(opts.Root, checkout(opts))
	r.guardCache = guardCache{files: workspace.NewScanCache(), git: workspace.NewScanCache()}
	if r.collector == nil {
		r.collector = checkCollector(opts.Config, opts.Root, opts.Env, r.hasher)
	}
	if r.providers == nil {
		r.providers = map[string]Provider{}
		for name, p := range opts.Config.Providers {
			r.providers[name] = newProvider(name, p)
		}
	}
	r.iso = isolation(opts.Config, opts.Root)
	r.history = filepath.Join(opts.Root, ".loop", "history", filepath.FromSlash(opts.RunID)+".md")
	r.tmp = filepath.Join(opts.Root, ".loop", "tmp", strings.ReplaceAll(opts.RunID, "/", "_"))
	return r
}

func newCheckpoint(opts Options, now time.Time) *state.Checkpoint {
	sum := sha256.Sum256(opts.Config.Source)
	now = now.UTC()
	return &state.Checkpoint{
		Version: state.Version, RunID: opts.RunID, Loop: opts.Config.Name,
		ConfigFile: opts.Config.File, ConfigHash: hex.EncodeToString(sum[:]), Commit: opts.Commit,
		Status: state.Running, StartedAt: now, UpdatedAt: now,
	}
}

// initMaps makes the checkpoint's maps writable: a loaded checkpoint has
// nil maps where they were empty.
func initMaps(cp *state.Checkpoint) {
	if cp.Revisions == nil {
		cp.Revisions = map[string]int{}
	}
	if cp.Tiers == nil {
		cp.Tiers = map[string]string{}
	}
	if cp.Stages == nil {
		cp.Stages = map[string]string{}
	}
}

// iterationCap is the cap in force: --max-iterations, else the config's.
func iterationCap(opts Options) int {
	if opts.MaxIterations > 0 {
		return opts.MaxIterations
	}
	return opts.Config.Stop.MaxIterations
}

// over reports whether the run has already ended for good. A run stopped
// by a budget that has since been raised continues, and the ledger says
// so.
func (r *run) over() bool {
	st := r.cp.Status
	switch {
	case !st.Terminal(), st.Resumable():
		return false
	case st.BudgetStop():
		raised := r.raisedBudget(st)
		if raised == "" {
			return true
		}
		r.rec.Record(ledger.Event{Type: ledger.BudgetRaised, Iteration: r.cp.Iteration, Status: string(st), Reason: raised})
		return false
	}
	return true
}

// raisedBudget says which budget now allows a run stopped by st to go on,
// or "" when none does.
func (r *run) raisedBudget(st state.Status) string {
	s, sp := r.cfg.Stop, r.cp.Spend
	switch {
	case st == state.IterationCap && r.maxIter > r.cp.Iteration:
		return fmt.Sprintf("iteration cap %d → %d", r.cp.MaxIterations, r.maxIter)
	case st == state.WallClock && s.MaxWallClock.IsSet() && s.MaxWallClock.Duration > sp.WallClock:
		return fmt.Sprintf("max_wall_clock %s (used %s)", s.MaxWallClock, sp.WallClock.Round(time.Second))
	case st == state.TokenBudget && s.MaxTokens > sp.Tokens:
		return fmt.Sprintf("max_tokens %d (used %d)", s.MaxTokens, sp.Tokens)
	case st == state.CostBudget && s.MaxCostUSD > sp.CostUSD:
		return fmt.Sprintf("max_cost_usd %.2f (used %.4f)", s.MaxCostUSD, sp.CostUSD)
	}
	return ""
}

// guardGrace is how long past the wall-clock deadline the guards may still
// scan the guarded paths and put back what a wave changed there, so that
// a run that runs out of time in the middle of a wave still puts back
// what its agents wrote in protected paths and in .git; a signal stops
// them at once. Their walks are bounded like any other (a file too large
// or a tree too deep is refused), so the grace only has to cover the
// files they read.
const guardGrace = 10 * time.Second

// wallContext bounds parent by the wall-clock budget left plus grace:
// the run's context with none, the guards' (run.guards) with guardGrace.
// Either also ends with the run's signals.
func (r *run) wallContext(parent context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	if !r.cfg.Stop.MaxWallClock.IsSet() {
		return context.WithCancel(parent)
	}
	left := r.cfg.Stop.MaxWallClock.Duration - r.wallUsed()
	return context.WithDeadlineCause(parent, r.now().Add(left+grace), errWallClock)
}

// wallUsed is the wall clock the run has used, this process included.
func (r *run) wallUsed() time.Duration { return r.baseWall + r.now().Sub(r.started) }

// logf reports a problem that is not an event, such as a history file that
// could not be written.
func (r *run) logf(format string, args ...any) {
	if r.opts.Log != nil {
		fmt.Fprintf(r.opts.Log, "loop-action: "+format+"\n", args...)
	}
}

// relative names a path inside the loop root relative to it, so that the
// ledger does not carry machine paths.
func relative(root, path string) string {
	rel, err := filepath.Rel(root, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return path
	}
	return filepath.ToSlash(rel)
}

// testStep, which only tests set, is called at the steps of an iteration
// a test acts between: "published" (a wave's guard and publication are
// done) and "swept" (the measurement's sweep is done). The binary leaves
// it nil.
var testStep func(r *run, step string)

func (r *run) step(name string) {
	if testStep != nil {
		testStep(r, name)
	}
}
