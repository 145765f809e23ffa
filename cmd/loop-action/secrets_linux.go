package main

import (
	"fmt"
	"io"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/loop-action/loop-action/internal/process"
)

// takeSecrets returns the secrets handed over by the first execution
// (with the handover variable removed, and no secret left in the
// environment), or,
// in the first execution, re-executes the program without them, confined;
// it only returns then if that fails. With no secrets to take, a process
// that is confined already is not re-executed, and one that cannot be
// goes on as it is.
func takeSecrets(args []string) (secrets, error) {
	if fd, ok := os.LookupEnv(handoverVar); ok {
		s, err := receive(fd)
		if err != nil {
			return nil, fmt.Errorf("take over the secrets of the first execution: %w", err)
		}
		os.Unsetenv(handoverVar)
		if left := secretsIn(os.Environ()); len(left) > 0 {
			return nil, fmt.Errorf("%d secrets are still in the environment after the handover", len(left))
		}
		return s, nil
	}
	s := secretsIn(os.Environ())
	if len(s) == 0 && process.Confined() {
		return nil, nil
	}
	err := reexec(args, s)
	if len(s) == 0 {
		return nil, nil // confining only spares each child a thread switch: Guard's spawning threads drop the capabilities instead
	}
	return nil, fmt.Errorf("take the secrets out of the environment: %w", err)
}

// reexec writes s to a memory file that survives exec, and executes this
// program again with args and the environment without s, confined
// (process.Exec: neither it nor its children hold the capabilities that
// read other processes' memory).
func reexec(args []string, s secrets) error {
	fd, err := unix.MemfdCreate("loop-action-secrets", 0) // no MFD_CLOEXEC: the new image inherits it
	if err != nil {
		return fmt.Errorf("memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), "secrets")
	defer f.Close()
	if _, err := f.Write(s.encode()); err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	return process.Exec(args, append([]string{handoverVar + "=" + strconv.Itoa(fd)}, public(os.Environ())...))
}

// receive reads the secrets from the descriptor named by fd and closes it.
func receive(fd string) (secrets, error) {
	n, err := strconv.Atoi(fd)
	if err != nil || n < 3 {
		return nil, fmt.Errorf("%s=%q is not a descriptor", handoverVar, fd)
	}
	unix.CloseOnExec(n)
	f := os.NewFile(uintptr(n), "secrets")
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxHandover))
	if err != nil {
		return nil, fmt.Errorf("read descriptor %d: %w", n, err)
	}
	return decodeSecrets(data)
}
