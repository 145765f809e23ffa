package process

import (
	"bufio"
	"os/exec"
	"slices"
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

// TestManyChildren: a process with more children than one read of its
// children file returns (300 pids of several digits each) has them
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
	kids := children(cmd.Process.Pid, nil)
	all, err := allProcs()
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
