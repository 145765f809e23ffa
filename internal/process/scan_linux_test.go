//go:build linux

package process

// Test helpers: a sweep's reads of /proc and its verdicts, each into maps
// of their own.

// scanProcs reads the stat of every process in /proc, into a map of its
// own.
func scanProcs() (map[int]procStat, error) {
	sc := getScan()
	defer scans.Put(sc)
	if err := sc.all(); err != nil {
		return nil, err
	}
	procs := make(map[int]procStat, len(sc.procs))
	for pid, s := range sc.procs {
		procs[pid] = s
	}
	return procs, nil
}

// scanTree is tree into a map of its own; ok is false when the kernel has
// no children files.
func scanTree(self, own int, live map[int]bool) (procs map[int]procStat, ok bool) {
	sc := getScan()
	defer scans.Put(sc)
	if !sc.tree(self, own, live) {
		return nil, false
	}
	procs = make(map[int]procStat, len(sc.procs))
	for pid, s := range sc.procs {
		procs[pid] = s
	}
	return procs, true
}

// escapees returns the processes to kill or reap: the descendants of self
// whose whole line of ancestors below self is outside self's session (own)
// and holds no live leader. uncertain reports a line that could not be
// followed (a process exited during the scan), so another round is due.
func escapees(procs map[int]procStat, self, own int, live map[int]bool) (pids []int, uncertain bool) {
	sc := &procScan{procs: procs, verdict: map[int]bool{}}
	uncertain = sc.escapees(self, own, live)
	return sc.left, uncertain
}
