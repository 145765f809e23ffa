package loop

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// hostileConfigs are configs within MaxNesting built to make loading
// slow: each repeats one item until the file is nearly size bytes.
func hostileConfigs(size int) map[string]string {
	fill := func(head, item string) string {
		var b strings.Builder
		b.WriteString(head)
		for i := 0; ; i++ {
			s := strings.ReplaceAll(item, "N", fmt.Sprint(i))
			if b.Len()+len(s) > size {
				return b.String()
			}
			b.WriteString(s)
		}
	}
	deep := strings.Repeat("{k = ", MaxNesting-2) + "1" + strings.Repeat("}", MaxNesting-2)
	dotted := strings.TrimPrefix(strings.Repeat(".k", MaxNesting-1), ".")
	list := "[" + strings.TrimSuffix(strings.Repeat(`"n0", `, 1000), ", ") + "]"
	return map[string]string{
		"deep values":          fill(`name = "x"`+"\n", "kN = "+deep+"\n"),
		"deep dotted keys":     fill(`name = "x"`+"\n", "[tN]\n"+dotted+" = 1\n"),
		"unknown keys":         fill(`name = "x"`+"\n", "kN = 1\n"),
		"unknown check keys":   fill(`name = "x"`+"\n", "[[goal]]\nname = \"gN\"\n[[goal.check]]\ntype = \"test\"\nrun = \"true\"\nzz = 1\n"),
		"nodes after nodes":    fill(`name = "x"`+"\n[providers.p]\ncommand = [\"a\"]\n", "[[node]]\nname = \"nN\"\nprovider = \"p\"\nafter = [\"nN0\"]\n"),
		"duplicate nodes":      fill(`name = "x"`+"\n", "[[node]]\nname = \"n\"\nprovider = \"p\"\n"),
		"long after lists":     fill(`name = "x"`+"\n", "[[node]]\nname = \"nN\"\nafter = "+list+"\n"),
		"judge checks":         fill(`name = "x"`+"\n[providers.p]\ncommand = [\"a\"]\n[[node]]\nname = \"j\"\nrole = \"judge\"\nprovider = \"p\"\n", "[[goal]]\nname = \"gN\"\n[[goal.check]]\ntype = \"judge\"\nnode = \"j\"\n[[node]]\nname = \"bN\"\nprovider = \"p\"\ngoals = [\"gN\"]\n"),
		"judge nodes":          fill(`name = "x"`+"\n[providers.p]\ncommand = [\"a\"]\n", "[[node]]\nname = \"jN\"\nrole = \"judge\"\nprovider = \"p\"\n"),
		"stages":               fill(`name = "x"`+"\n", "[[stage]]\nname = \"sN\"\nafter = [\"sN0\"]\n[[node]]\nname = \"nN\"\nstage = \"sN\"\n"),
		"long unknown keys":    fill(`name = "x"`+"\n[stop]\n", "kN"+strings.Repeat("x", MaxKeyPath-20)+" = 1\n"),
		"a long header, keys":  fill(`name = "x"`+"\n[stop.\""+strings.Repeat("x", size/2)+"\"]\n", "kN = 1\n"),
		"one long unknown key": `name = "x"` + "\n[stop]\n" + strings.Repeat("x", size-30) + " = 1\n",
		"judges of one goal":   fill(`name = "x"`+"\n[providers.p]\ncommand = [\"a\"]\n[[goal]]\nname = \"g\"\n", "[[goal.check]]\ntype = \"judge\"\nnode = \"jN\"\n[[node]]\nname = \"jN\"\nrole = \"judge\"\nprovider = \"p\"\n[[node]]\nname = \"bN\"\nprovider = \"p\"\ngoals = [\"g\"]\n"),
		"a chain turned back":  fill(`name = "x"`+"\n[[node]]\nname = \"n\"\nafter = [\"n0\"]\n", "[[node]]\nname = \"nN\"\nafter = [\"n\", \"nN1\"]\n"),
		"wide inline table":    fill(`name = "x"`+"\na = {k = 1", ", kN = 1") + "}\n",
		"long arrays":          fill(`name = "x"`+"\n[context]\nfiles = [\"a\"", `, "N"`) + "]\n",
	}
}

// BenchmarkParseHostile loads each hostile config. Every one must load in
// time and memory linear in its size: compare ns/op and B/op with the
// "unknown keys" line, the simplest of them.
func BenchmarkParseHostile(b *testing.B) {
	for name, src := range hostileConfigs(MaxConfigSize) {
		b.Run(strings.ReplaceAll(name, " ", "-"), func(b *testing.B) {
			if len(src) > MaxConfigSize {
				b.Fatalf("%d bytes, over the limit", len(src))
			}
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				_, _ = Parse("loop.toml", []byte(src))
			}
		})
	}
}

// TestHostileConfigsLoadInLinearMemory loads each hostile config at two
// sizes and compares the bytes allocated: doubling the config must not
// much more than double them. (Bytes allocated, unlike time, do not depend
// on how busy the machine is.) It does not run in parallel, so that no
// other test allocates meanwhile.
func TestHostileConfigsLoadInLinearMemory(t *testing.T) {
	const size = 32 << 10
	small, large := hostileConfigs(size), hostileConfigs(2*size)
	for name := range small {
		a, b := allocated(small[name]), allocated(large[name])
		if ratio := float64(b) / float64(a); ratio > 3 {
			t.Errorf("%s: %d bytes allocated at %d KiB, %d at %d KiB: %.1f times as many, want about 2",
				name, a, size>>10, b, 2*size>>10, ratio)
		}
	}
}

// allocated returns how many bytes one Parse of src allocates.
func allocated(src string) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _ = Parse("loop.toml", []byte(src))
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
