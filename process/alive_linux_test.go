package process

import "testing"

func TestParseStat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		stat  string
		state byte
		pgrp  int
		ok    bool
	}{
		{"1234 (sleep) S 1 1234 1234 0 -1 4194560", 'S', 1234, true},
		{"77 (a) b (c)) Z 1 70 70 0", 'Z', 70, true},
		{"5 (x) R", 0, 0, false},
		{"garbage", 0, 0, false},
	}
	for _, tt := range tests {
		state, pgrp, ok := parseStat([]byte(tt.stat))
		if state != tt.state || pgrp != tt.pgrp || ok != tt.ok {
			t.Errorf("parseStat(%q) = %q, %d, %v; want %q, %d, %v", tt.stat, state, pgrp, ok, tt.state, tt.pgrp, tt.ok)
		}
	}
}
