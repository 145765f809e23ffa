package process

import (
	"bytes"
	"os"
	"strconv"
)

// liveMembers reports whether a process of group pgid is still running,
// reading /proc: unlike kill(-pgid, 0) it does not count zombies, which a
// slow or absent init (PID 1 in a container) may never reap. ok is false
// when /proc cannot be read.
func liveMembers(pgid int) (alive, ok bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return false, false
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone since the listing
		}
		if state, group, ok := parseStat(stat); ok && group == pgid && state != 'Z' && state != 'X' {
			return true, true
		}
	}
	return false, true
}

// parseStat reads the state and process group from /proc/PID/stat:
// "pid (comm) state ppid pgrp ...", where comm may hold spaces and ')'.
func parseStat(stat []byte) (state byte, pgrp int, ok bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := bytes.Fields(stat[i+1:])
	if len(fields) < 3 || len(fields[0]) != 1 {
		return 0, 0, false
	}
	pgrp, err := strconv.Atoi(string(fields[2]))
	return fields[0][0], pgrp, err == nil
}
