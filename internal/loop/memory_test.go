package loop

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMemoryRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		extra    string
		want     string // the error, "" for none
		carry    int
		maxBytes int
	}{
		{"", "", DefaultMemoryCarry, DefaultMemoryMaxBytes},
		{"[memory]\nenabled = true\ncarry = 0\n", "", 0, DefaultMemoryMaxBytes},
		{"[memory]\nenabled = true\ncarry = 20\nmax_bytes = \"64KiB\"\n", "", 20, 64 << 10},
		{"[memory]\nmax_bytes = 256\n", "", DefaultMemoryCarry, 256},
		{"[memory]\ncarry = 21\n", "loop.toml:19:1: memory.carry must be from 0 to 20, not 21", 0, 0},
		{"[memory]\ncarry = -1\n", "loop.toml:19:1: memory.carry must be from 0 to 20, not -1", 0, 0},
		{"[memory]\nmax_bytes = 255\n", "loop.toml:19:1: memory.max_bytes must be from 256 to 65536 bytes, not 255", 0, 0},
		{"[memory]\nmax_bytes = \"1MiB\"\n", "loop.toml:19:1: memory.max_bytes must be from 256 to 65536 bytes, not 1048576", 0, 0},
		{"[memory]\nmax_bytes = \"lots\"\n", `loop.toml:19:1: memory.max_bytes "lots" is not a size`, 0, 0},
		{"[memory]\nremember = true\n", `loop.toml:19:1: unknown key "remember" in [memory]; known keys: enabled, carry, max_bytes`, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.extra, func(t *testing.T) {
			t.Parallel()
			cfg, err := Parse("loop.toml", []byte(base+"\n"+tt.extra))
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				got := []int{cfg.Memory.Carry, cfg.Memory.EntryBytes()}
				if diff := cmp.Diff([]int{tt.carry, tt.maxBytes}, got); diff != "" {
					t.Errorf("carry, bytes (-want +got):\n%s", diff)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want it to hold %q", err, tt.want)
			}
		})
	}
}
