package process

import (
	"bufio"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseStat(t *testing.T) {
	t.Parallel()
	const tail = " 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 8812 "
	tests := []struct {
		stat string
		want procStat
		ok   bool
	}{
		{"1234 (sleep) S 1 1234 1230" + tail + "1 2", procStat{state: 'S', ppid: 1, pgrp: 1234, sid: 1230, start: 8812}, true},
		{"77 (a) b (c)) Z 9 70 71" + tail, procStat{state: 'Z', ppid: 9, pgrp: 70, sid: 71, start: 8812}, true},
		{"5 (x) R 1 2 3", procStat{}, false},
		{"5 (x) R 1 2 x" + tail, procStat{}, false},
		{"garbage", procStat{}, false},
	}
	for _, tt := range tests {
		got, ok := parseStat([]byte(tt.stat))
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("parseStat(%q) = %+v, %v; want %+v, %v", tt.stat, got, ok, tt.want, tt.ok)
		}
	}
}

func TestNumber(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		want int
		ok   bool
	}{
		{"1", 1, true},
		{"4194304", 4194304, true},
		{"123\x00\x00\x00", 123, true}, // a getdents64 name, NUL-padded
		{"self", 0, false},
		{"12a", 0, false},
		{"-1", 0, false},
		{"", 0, false},
		{"\x00", 0, false},
		{"1234567890123456789", 0, false}, // too long for a pid: never overflows
	}
	for _, tt := range tests {
		got, ok := number([]byte(tt.name))
		if got != tt.want || ok != tt.ok {
			t.Errorf("number(%q) = %d, %v; want %d, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

// TestListedLikeReadDir: the processes a scan lists straight from
// getdents64 are /proc's numeric entries, as os.ReadDir lists them: every
// process there before and after the scan was read by it.
func TestListedLikeReadDir(t *testing.T) {
	t.Parallel()
	before, after := numericEntries(t), map[int]bool{}
	procs, err := scanProcs()
	if err != nil {
		t.Fatal(err)
	}
	for pid := range numericEntries(t) {
		if before[pid] {
			after[pid] = true
		}
	}
	if len(after) < 2 {
		t.Fatalf("only %d processes in /proc", len(after))
	}
	for pid := range after {
		if _, ok := procs[pid]; !ok {
			t.Errorf("process %d, listed before and after the scan, is not in it", pid)
		}
	}
}

func numericEntries(t *testing.T) map[int]bool {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	pids := map[int]bool{}
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids[pid] = true
		}
	}
	return pids
}

// TestManyChildren: a process with more children than a stat-sized buffer
// holds in its children file (300 pids of several digits each) has them
// all found by the tree scan, as by reading every process.
func TestManyChildren(t *testing.T) {
	t.Parallel()
	if !childrenFiles() {
		t.Skip("no children files in /proc")
	}
	cmd := exec.Command("sh", "-c", `i=0; while [ $i -lt 300 ]; do sleep 30 & i=$((i+1)); done; echo ready; wait`)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() }()
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	sc := getScan()
	defer scans.Put(sc)
	kids := sc.children(cmd.Process.Pid, nil)
	all, err := scanProcs()
	if err != nil {
		t.Fatal(err)
	}
	var want []int
	for pid, s := range all {
		if s.ppid == cmd.Process.Pid {
			want = append(want, pid)
		}
	}
	slices.Sort(kids)
	slices.Sort(want)
	if len(want) != 300 {
		t.Fatalf("%d children in /proc, want 300", len(want))
	}
	if diff := cmp.Diff(want, kids); diff != "" {
		t.Errorf("children (-every process +children files):\n%s", diff)
	}
}
