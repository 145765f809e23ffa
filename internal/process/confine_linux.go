package process

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// A process is confined when none of its threads holds droppedCaps in any
// capability set, nor can ever get them back: then a child forked from any
// thread lacks them, as it would forked from a thread that dropped them,
// and Run forks on whatever thread calls it. Forking each child on a
// thread of its own costs a thread's start and end, so a program confines
// itself first thing (Exec). Nothing can leave the state: a
// capability gone from the bounding set never comes back, the other sets
// cannot grow beyond the permitted set (nor the inheritable beyond the
// bounding one), and a new thread copies the sets of the thread that
// creates it.

// Confined reports whether this process is confined: every thread's
// effective, permitted, inheritable and ambient sets lack droppedCaps, and
// so does its bounding set, unless the thread could not drop from it
// either (no CAP_SETPCAP and not root), which is where a thread that
// dropped them would have left it too. It is false when a thread's sets cannot be read.
func Confined() bool {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return false
	}
	euid := os.Geteuid()
	for _, t := range tasks {
		status, err := os.ReadFile("/proc/self/task/" + t.Name() + "/status")
		if errors.Is(err, fs.ErrNotExist) {
			continue // the thread has ended
		}
		sets, ok := capabilitySets(status)
		if err != nil || !ok || !setsConfined(sets, euid) {
			return false
		}
	}
	return true
}

// capSets are a thread's capability sets, as /proc/PID/task/TID/status
// shows them: "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb".
type capSets map[string]uint64

// capabilitySets reads the Cap* lines of a status file; ok is false unless
// all five are there.
func capabilitySets(status []byte) (sets capSets, ok bool) {
	sets = capSets{}
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		name, hex, found := strings.Cut(sc.Text(), ":\t")
		if !found || !strings.HasPrefix(name, "Cap") {
			continue
		}
		v, err := strconv.ParseUint(hex, 16, 64)
		if err != nil {
			return nil, false
		}
		sets[name] = v
	}
	for _, name := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
		if _, found := sets[name]; !found {
			return nil, false
		}
	}
	return sets, true
}

// setsConfined is Confined for one thread of a process running as euid.
func setsConfined(s capSets, euid int) bool {
	mask := droppedMask()
	if (s["CapInh"]|s["CapPrm"]|s["CapEff"]|s["CapAmb"])&mask != 0 {
		return false
	}
	return s["CapBnd"]&mask == 0 || euid != 0 && s["CapPrm"]&(1<<unix.CAP_SETPCAP) == 0
}

// droppedMask is droppedCaps as a capability set.
func droppedMask() uint64 {
	var m uint64
	for _, c := range droppedCaps {
		m |= 1 << c
	}
	return m
}

// Exec confines this process: it executes this program again
// (/proc/self/exe: same pid) with argv and env, from a thread that has
// dropped droppedCaps, so that the new image and every thread it will
// have lack them. It returns only when that fails; the calling goroutine
// then stays on its thread. Call it before anything else, and only when
// the process is not Confined; the caller must make sure a second run
// does not call it again (the new image may still not be confined when
// the capabilities could not all be dropped).
func Exec(argv, env []string) error {
	runtime.LockOSThread() // the capabilities dropped are this thread's, and exec takes them from it
	if err := dropCaps(); err != nil {
		return err
	}
	if err := unix.Exec("/proc/self/exe", argv, env); err != nil {
		return fmt.Errorf("process: execute this program again: %w", err)
	}
	return nil // not reached
}
