package process

import "testing"

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
