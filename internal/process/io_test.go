//go:build unix

package process

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// tenMB writes 10 MB of c followed by marker to stdout, or to stderr when
// toStderr is set.
func tenMB(c, marker string, toStderr bool) string {
	s := `{ head -c 10000000 /dev/zero | tr '\0' '` + c + `'; printf ` + marker + `; }`
	if toStderr {
		s += " >&2"
	}
	return s
}

const tenMBPlus = 10_000_000

func TestLargeOutputBounded(t *testing.T) {
	t.Parallel()
	const tailBytes, stdoutBytes = 1000, 4096
	res := runWithin(t, t.Context(), Spec{
		Argv:        ShellArgv(tenMB("x", "OUT-END", false) + " & " + tenMB("y", "ERR-END", true) + "; wait"),
		TailBytes:   tailBytes,
		StdoutBytes: stdoutBytes,
	}, eventually)
	if !res.OK() {
		t.Fatalf("OK() = false: ExitCode=%d StartErr=%v", res.ExitCode, res.StartErr)
	}
	if got, want := res.OutputBytes, int64(2*tenMBPlus+len("OUT-END")+len("ERR-END")); got != want {
		t.Errorf("OutputBytes = %d, want %d", got, want)
	}
	wantStdout := strings.Repeat("x", stdoutBytes-len("OUT-END")) + "OUT-END"
	if diff := cmp.Diff(wantStdout, string(res.Stdout)); diff != "" {
		t.Errorf("Stdout mismatch (-want +got):\n%s", diff)
	}
	if !res.StdoutTruncated {
		t.Error("StdoutTruncated = false, want true")
	}
	if len(res.Tail) != tailBytes {
		t.Errorf("len(Tail) = %d, want %d", len(res.Tail), tailBytes)
	}
	// The streams were written concurrently: the tail ends with whichever
	// stream the last read came from.
	if !bytes.HasSuffix(res.Tail, []byte("OUT-END")) && !bytes.HasSuffix(res.Tail, []byte("ERR-END")) {
		t.Errorf("Tail ends with %q, want OUT-END or ERR-END", res.Tail[max(0, len(res.Tail)-20):])
	}
}

// TestLargeOutputMemory checks, with the default limits, that 20 MB of output
// costs far less than 20 MB of allocations and that the tail ends with the
// last bytes written. Not parallel: it measures process-wide allocations.
func TestLargeOutputMemory(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	script := tenMB("x", "OUT-END", false) + "; " + tenMB("y", "ERR-END", true)
	res := runWithin(t, t.Context(), Spec{Argv: ShellArgv(script)}, eventually)
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("Run allocated %d MiB for 20 MB of output, want < 16 MiB", alloc>>20)
	}
	if got, want := res.OutputBytes, int64(2*tenMBPlus+14); got != want {
		t.Errorf("OutputBytes = %d, want %d", got, want)
	}
	wantStdout := strings.Repeat("x", DefaultStdoutBytes-len("OUT-END")) + "OUT-END"
	if diff := cmp.Diff(wantStdout, string(res.Stdout)); diff != "" {
		t.Errorf("Stdout mismatch (-want +got):\n%s", diff)
	}
	wantTail := strings.Repeat("y", DefaultTailBytes-len("ERR-END")) + "ERR-END"
	if diff := cmp.Diff(wantTail, string(res.Tail)); diff != "" {
		t.Errorf("Tail mismatch (-want +got):\n%s", diff)
	}
}

func TestSmallOutput(t *testing.T) {
	t.Parallel()
	res := runTimed(t, Spec{Argv: ShellArgv("echo out; echo err >&2")})
	got := struct {
		Stdout      string
		Truncated   bool
		OutputBytes int64
	}{string(res.Stdout), res.StdoutTruncated, res.OutputBytes}
	want := got
	want.Stdout, want.Truncated, want.OutputBytes = "out\n", false, 8
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	// Separate pipes: arrival order across them is not guaranteed.
	if tail := string(res.Tail); tail != "out\nerr\n" && tail != "err\nout\n" {
		t.Errorf("Tail = %q, want both lines", tail)
	}
}

func TestStdin(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("0123456789abcdef", 256<<10) // 4 MiB, both ways at once
	file := filepath.Join(t.TempDir(), "in")
	if err := os.WriteFile(file, []byte("from a file"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() }) // not defer: the subtests run after this function returns
	tests := []struct {
		name  string
		stdin io.Reader
		want  string
	}{
		{name: "nil is empty", stdin: nil, want: ""},
		{name: "string", stdin: strings.NewReader("hello\nworld\n"), want: "hello\nworld\n"},
		{name: "large", stdin: strings.NewReader(big), want: big},
		{name: "os file", stdin: f, want: "from a file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := runWithin(t, t.Context(), Spec{Argv: []string{"cat"}, Stdin: tt.stdin, StdoutBytes: 8 << 20}, eventually)
			if !res.OK() {
				t.Errorf("OK() = false: ExitCode=%d TimedOut=%v StartErr=%v", res.ExitCode, res.TimedOut, res.StartErr)
			}
			if string(res.Stdout) != tt.want {
				t.Errorf("Stdout = %d bytes, want %d bytes (content differs)", len(res.Stdout), len(tt.want))
			}
		})
	}
}

// TestStdinNotRead: a child that ignores its stdin must not stall Run, nor
// must a Stdin that blocks forever in Read.
func TestStdinNotRead(t *testing.T) {
	t.Parallel()
	blockingR, blockingW := io.Pipe()
	t.Cleanup(func() { blockingW.Close() }) // ends the abandoned stdin copier
	for name, stdin := range map[string]io.Reader{
		"large":        strings.NewReader(strings.Repeat("x", 10<<20)),
		"never-ending": blockingR,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res := runTimed(t, Spec{Argv: []string{"true"}, Stdin: stdin})
			if !res.OK() {
				t.Errorf("OK() = false: ExitCode=%d StartErr=%v", res.ExitCode, res.StartErr)
			}
		})
	}
}

func TestDirAndEnv(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	res := runTimed(t, Spec{
		Argv: ShellArgv(`pwd -P; echo "$GREETING"; echo "${HOME-unset}"`),
		Dir:  dir,
		Env:  []string{"GREETING=hi there"},
	})
	if diff := cmp.Diff(dir+"\nhi there\nunset\n", string(res.Stdout)); diff != "" {
		t.Errorf("Stdout mismatch (-want +got):\n%s", diff)
	}
}

func TestStdoutTee(t *testing.T) {
	t.Parallel()
	var tee bytes.Buffer
	res := runWithin(t, t.Context(), Spec{
		Argv:        ShellArgv("seq 1 100000; echo err >&2"),
		StdoutBytes: 10,
		StdoutTee:   &tee,
	}, eventually)
	var want strings.Builder
	for i := 1; i <= 100000; i++ {
		want.WriteString(strconv.Itoa(i) + "\n")
	}
	if tee.String() != want.String() {
		t.Errorf("tee got %d bytes, want all %d bytes of stdout", tee.Len(), want.Len())
	}
	if res.TeeErr != nil || string(res.Stdout) != "99\n100000\n" {
		t.Errorf("TeeErr=%v Stdout=%q, want nil \"99\\n100000\\n\"", res.TeeErr, res.Stdout)
	}
}

// failingWriter accepts n bytes, then fails every write.
type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		return 0, errors.New("disk full")
	}
	w.n -= len(p)
	return len(p), nil
}

func TestStdoutTeeFailureDoesNotBlock(t *testing.T) {
	t.Parallel()
	res := runWithin(t, t.Context(), Spec{
		Argv:      ShellArgv(`head -c 3000000 /dev/zero | tr '\0' x; printf END`),
		StdoutTee: &failingWriter{n: 10},
	}, eventually)
	if res.TeeErr == nil || !strings.Contains(res.TeeErr.Error(), "disk full") {
		t.Errorf("TeeErr = %v, want the tee's error", res.TeeErr)
	}
	if !res.OK() || res.OutputBytes != 3000003 || !bytes.HasSuffix(res.Stdout, []byte("xEND")) {
		t.Errorf("OK=%v OutputBytes=%d: output not fully drained", res.OK(), res.OutputBytes)
	}
}

func TestDuration(t *testing.T) {
	t.Parallel()
	res := runTimed(t, Spec{Argv: []string{"sleep", "0.3"}})
	if res.Duration < 250*time.Millisecond || res.Duration > promptly {
		t.Errorf("Duration = %v, want about 300ms", res.Duration)
	}
}

// TestQuoteRoundTrip: feeding Quote's output to sh reproduces the argv.
func TestQuoteRoundTrip(t *testing.T) {
	t.Parallel()
	argv := []string{"plain", "", "it's", `a "b" \c`, "$HOME `x`", "*", "new\nline", "''"}
	res := runTimed(t, Spec{Argv: ShellArgv(`printf '%s\0' ` + Quote(argv))})
	got := strings.Split(strings.TrimSuffix(string(res.Stdout), "\x00"), "\x00")
	if diff := cmp.Diff(argv, got); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
}

// TestNoGoroutineLeaks runs every kind of ending and checks that the number
// of goroutines returns to where it was. Not parallel: it counts goroutines.
func TestNoGoroutineLeaks(t *testing.T) {
	specs := []Spec{
		{Argv: []string{"true"}},
		{Argv: ShellArgv("echo out; echo err >&2; exit 3")},
		{Argv: []string{"cat"}, Stdin: strings.NewReader("in")},
		{Argv: []string{"true"}, Stdin: strings.NewReader(strings.Repeat("x", 1<<20))},
		{Argv: ShellArgv("sleep 30 & echo done")},
		{Argv: ShellArgv("sleep 30 & sleep 30 & wait"), Timeout: 100 * time.Millisecond, KillGrace: 200 * time.Millisecond},
		{Argv: []string{"no-such-binary-4242"}},
		{Argv: nil},
	}
	before := runtime.NumGoroutine()
	for range 2 {
		for _, spec := range specs {
			runTimed(t, spec)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		runTimedCtx(t, ctx, Spec{Argv: ShellArgv("sleep 30 & wait"), KillGrace: 200 * time.Millisecond})
		cancel()
	}
	deadline := time.Now().Add(promptly)
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+2 {
		buf := make([]byte, 1<<20)
		t.Errorf("goroutines: %d before, %d after\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}
