package process

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// confineHelper, set in the environment of the test binary, makes it a
// program that confines itself (see TestMain); its value is the stage.
const confineHelper = "PROCESS_TEST_CONFINE"

// init locks the main goroutine to the main thread for the main-dropped
// stage (the runtime holds it there during initialization only).
func init() {
	if os.Getenv(confineHelper) == "main-dropped" {
		runtime.LockOSThread()
	}
}

// helperMain runs the test binary as the program confineHelper names, if
// it does, and returns its exit code.
func helperMain() (code int, ok bool) {
	stage, ok := os.LookupEnv(confineHelper)
	if !ok {
		return 0, false
	}
	return confineMain(stage), true
}

// confineMain is a program's main for the stage:
//   - exec: confines the process with Exec, which runs it again as
//     confined;
//   - confined: prints Confined, whether Guard forks on any thread, and the
//     status of a child that Run started;
//   - main-dropped: drops droppedCaps on the main thread only, and prints
//     Confined.
func confineMain(stage string) int {
	switch stage {
	case "exec":
		env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, confineHelper+"=") })
		err := Exec(os.Args, append(env, confineHelper+"=confined"))
		fmt.Fprintln(os.Stderr, err)
		return 2
	case "confined":
		fmt.Printf("confined=%v\n", Confined())
		if err := Guard(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		fmt.Printf("direct=%v\n", direct)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res := Run(ctx, Spec{Argv: []string{"cat", "/proc/self/status"}})
		os.Stdout.Write(res.Stdout)
		return 0
	case "main-dropped":
		if err := dropCaps(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		fmt.Printf("confined=%v\n", Confined())
		return 0
	}
	return 2
}

// helper runs the test binary as a program at stage and returns its output.
func helper(t *testing.T, stage string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), confineHelper+"="+stage)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", stage, err, stderr.Bytes())
	}
	return string(out)
}

// needPtrace skips unless this process holds CAP_SYS_PTRACE, as root does
// in CI and in the action's container: otherwise there is nothing to drop.
func needPtrace(t *testing.T) capSets {
	t.Helper()
	mine := threadCaps(t)
	if mine["CapEff"]&(1<<unix.CAP_SYS_PTRACE) == 0 {
		t.Skip("this process does not hold CAP_SYS_PTRACE: nothing to drop")
	}
	return mine
}

// TestConfinedProcessForksAnywhere: a program that confines itself with
// Exec is Confined, Run then forks on any thread, and a child it
// runs holds none of droppedCaps in any set, the others untouched.
func TestConfinedProcessForksAnywhere(t *testing.T) {
	t.Parallel()
	mine := needPtrace(t)
	out := helper(t, "exec")
	head, status, _ := strings.Cut(out, "direct=true\n")
	if diff := cmp.Diff("confined=true\n", head); diff != "" {
		t.Fatalf("the confined program said (-want +got):\n%s\nall of it:\n%s", diff, out)
	}
	child := capSetsOf(t, []byte(status))
	dropped := droppedMask()
	for _, set := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
		if got := child[set] & dropped; got != 0 {
			t.Errorf("the child's %s = %#x holds %#x of the dropped capabilities", set, child[set], got)
		}
	}
	if diff := cmp.Diff(mine["CapBnd"]&^dropped, child["CapBnd"]); diff != "" {
		t.Errorf("the child's CapBnd: only the dropped capabilities may be missing (-want +got):\n%s", diff)
	}
}

// TestConfinedLooksAtEveryThread: a process whose main thread dropped the
// capabilities but whose other threads hold them is not confined — what
// /proc/self/status shows is the main thread alone.
func TestConfinedLooksAtEveryThread(t *testing.T) {
	t.Parallel()
	needPtrace(t)
	if out := helper(t, "main-dropped"); out != "confined=false\n" {
		t.Errorf("a process with one thread dropped says %q, want confined=false", out)
	}
	if Confined() {
		t.Error("this test process is Confined, although its other threads hold the capabilities")
	}
}

// TestSetsConfined: which capability sets count as confined.
func TestSetsConfined(t *testing.T) {
	all, mask := uint64(1<<41-1), droppedMask()
	setpcap := uint64(1) << unix.CAP_SETPCAP
	for _, c := range []struct {
		name string
		sets capSets
		euid int
		want bool
	}{
		{"root with every capability", capSets{"CapInh": 0, "CapPrm": all, "CapEff": all, "CapBnd": all, "CapAmb": 0}, 0, false},
		{"root, all dropped", capSets{"CapInh": 0, "CapPrm": all &^ mask, "CapEff": all &^ mask, "CapBnd": all &^ mask, "CapAmb": 0}, 0, true},
		{"root, bounding set left", capSets{"CapInh": 0, "CapPrm": all &^ mask, "CapEff": all &^ mask, "CapBnd": all, "CapAmb": 0}, 0, false},
		{"root without CAP_SETPCAP, bounding set left", capSets{"CapInh": 0, "CapPrm": all &^ mask &^ setpcap, "CapEff": 0, "CapBnd": all, "CapAmb": 0}, 0, false},
		{"a user, bounding set full", capSets{"CapInh": 0, "CapPrm": 0, "CapEff": 0, "CapBnd": all, "CapAmb": 0}, 1000, true},
		{"a user with CAP_SETPCAP, bounding set full", capSets{"CapInh": 0, "CapPrm": setpcap, "CapEff": 0, "CapBnd": all, "CapAmb": 0}, 1000, false},
		{"a user with CAP_SYS_PTRACE ambient", capSets{"CapInh": mask, "CapPrm": mask, "CapEff": mask, "CapBnd": all, "CapAmb": 1 << unix.CAP_SYS_PTRACE}, 1000, false},
		{"inheritable only", capSets{"CapInh": 1 << unix.CAP_BPF, "CapPrm": 0, "CapEff": 0, "CapBnd": all &^ mask, "CapAmb": 0}, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := setsConfined(c.sets, c.euid); got != c.want {
				t.Errorf("setsConfined = %v, want %v", got, c.want)
			}
		})
	}
}
