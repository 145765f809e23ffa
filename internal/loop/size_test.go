package loop

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMaxFileSize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		value string // "" leaves the key out
		bytes int64
		diag  string // the one diagnostic, or ""
	}{
		{"", DefaultMaxFileSize, ""},
		{`"100MiB"`, 100 << 20, ""},
		{`"2 GiB"`, 2 << 30, ""},
		{`"2TiB"`, 2 << 40, ""},
		{`"512"`, 512, ""},
		{`"512B"`, 512, ""},
		{"1048576", 1 << 20, ""},
		{`"100MB"`, 0, `loop.toml:18:1: run.max_file_size "100MB" has an unknown unit: use B, KiB, MiB, GiB or TiB (powers of 1024), as in "100MiB"`},
		{`"1.5GiB"`, 0, `loop.toml:18:1: run.max_file_size "1.5GiB" is not a size (use an integer of bytes, or a string such as "100MiB" or "2 GiB")`},
		{`"lots"`, 0, `loop.toml:18:1: run.max_file_size "lots" is not a size (use an integer of bytes, or a string such as "100MiB" or "2 GiB")`},
		{`"5 mib"`, 0, `loop.toml:18:1: run.max_file_size "5 mib" has an unknown unit: use B, KiB, MiB, GiB or TiB (powers of 1024), as in "100MiB"`},
		{"0", 0, `loop.toml:18:1: run.max_file_size 0 must be positive`},
		{"-5", -5, `loop.toml:18:1: run.max_file_size -5 must be positive`},
		{"true", 0, `loop.toml:18:1: run.max_file_size true is not a size (use an integer of bytes, or a string such as "100MiB" or "2 GiB")`},
		{`"99999999TiB"`, 0, `loop.toml:18:1: run.max_file_size "99999999TiB" is too large`},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			t.Parallel()
			src := base
			if tt.value != "" {
				src += "[run]\nmax_file_size = " + tt.value + "\n"
			}
			var got []string
			for _, d := range diagnostics(t, src) {
				got = append(got, d.String())
			}
			var want []string
			if tt.diag != "" {
				want = []string{tt.diag}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s", diff)
			}
			if tt.diag != "" {
				return
			}
			cfg, err := Parse("loop.toml", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.Run.MaxFileSize.Bytes; got != tt.bytes {
				t.Errorf("run.max_file_size = %d bytes, want %d", got, tt.bytes)
			}
		})
	}
}
