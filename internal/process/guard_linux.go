package process

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"

	"golang.org/x/sys/unix"
)

// droppedCaps are the capabilities no child gets: reading another
// process's memory or environment (SYS_PTRACE), the kernel's or the
// machine's memory (SYS_RAWIO, SYS_MODULE, BPF, PERFMON), and the
// administration and file-handle powers that lead there (SYS_ADMIN,
// DAC_READ_SEARCH).
var droppedCaps = []int{
	unix.CAP_SYS_PTRACE,
	unix.CAP_SYS_ADMIN,
	unix.CAP_SYS_MODULE,
	unix.CAP_SYS_RAWIO,
	unix.CAP_DAC_READ_SEARCH,
	unix.CAP_BPF,
	unix.CAP_PERFMON,
}

// direct is set by setup when the process is Confined: children are then
// started on whatever thread calls spawn.
var direct bool

// setup is Guard on Linux. Unless the process is confined, it drops
// droppedCaps once on a thread of its own, to fail now when they cannot
// be dropped rather than at the first start.
func setup() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("process: become a child subreaper: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("process: make the process undumpable: %w", err)
	}
	if direct = Confined(); direct {
		return nil
	}
	return onDroppedThread(func() error { return nil })
}

// spawn starts cmd, on a thread that dropped droppedCaps unless the
// process is confined.
func spawn(cmd *exec.Cmd) error {
	if err := Guard(); err != nil {
		return err
	}
	if direct {
		return cmd.Start()
	}
	return onDroppedThread(cmd.Start)
}

// onDroppedThread runs f on a thread of its own that first drops
// droppedCaps (a child forked there inherits the thread's sets). The
// goroutine stays locked to the thread and ends, so the thread ends with
// it and the runtime never runs anything else there.
func onDroppedThread(f func() error) error {
	done := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		if err := dropCaps(); err != nil {
			done <- err
			return
		}
		done <- f()
	}()
	return <-done
}

// dropCaps removes droppedCaps from the calling thread's bounding set and
// from its effective, permitted and inheritable sets, and clears its
// ambient set. It fails when this process is root and a capability stays
// in the bounding set.
func dropCaps() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("process: clear the ambient capabilities: %w", err)
	}
	for _, c := range droppedCaps {
		has, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0)
		if err != nil || has == 0 {
			continue // unknown to this kernel, or already gone
		}
		err = unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if err != nil && os.Geteuid() == 0 {
			return fmt.Errorf("process: drop capability %d from the bounding set of children: %w", c, err)
		}
	}
	return dropFromSets()
}

// dropFromSets removes droppedCaps from the calling thread's effective,
// permitted and inheritable sets. Lowering them needs no privilege.
func dropFromSets() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("process: read the thread's capabilities: %w", err)
	}
	for _, c := range droppedCaps {
		bit := uint32(1) << (c % 32)
		d := &data[c/32]
		d.Effective &^= bit
		d.Permitted &^= bit
		d.Inheritable &^= bit
	}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("process: lower the thread's capabilities: %w", err)
	}
	return nil
}
