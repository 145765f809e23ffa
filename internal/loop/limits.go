package loop

import "fmt"

// MaxConfigSize is the largest config Parse accepts, in bytes: 256 KiB.
// The configs people write are a few KiB (the examples are under 2 KiB; 50
// nodes with long instructions and 100 goals fit in well under 100 KiB),
// so this leaves room to spare, while bounding what a hostile file costs:
// at this size the worst configs of BenchmarkParseHostile load in under a
// second and 250 MB on a busy 2-core machine. (At 1 MiB they took 4 s and
// 900 MB: decoding costs grow with size times depth.)
const MaxConfigSize = 256 << 10

// MaxNesting is how deep a value may sit in a config: every segment of a
// table header or dotted key, every inline table and every array around it
// counts one. The deepest value a loop config has is five levels down
// ([providers.claude] tiers = { cheap = ["--model"] }). BurntSushi/toml
// spends time and memory quadratic in the depth (24 KB of nested inline
// tables took seconds and gigabytes), so the depth is bounded before any
// decoding.
const MaxNesting = 32

// MaxKeyPath is the longest a key may be with the path of the tables it
// sits in, in bytes, as the key index writes it (goal[1].check[0].type).
// A loop config's longest is well under 100 bytes. Without the bound a
// long table header followed by many short keys costs memory quadratic in
// the file's size, in BurntSushi/toml and in the key index alike (a 64 KiB
// header and 64 KiB of keys took 840 MB).
const MaxKeyPath = 1024

// checkLimits reports a config that is too large or nests too deep, before
// anything decodes it; when it is within both, it returns the config's
// keys. The key scan is one linear pass that stops at the first value too
// deep, and it never fails on bad TOML: what it cannot read, the decoder
// reports.
func checkLimits(file string, src []byte) ([]keyPos, *Diagnostic) {
	if len(src) > MaxConfigSize {
		return nil, &Diagnostic{Pos: Position{File: file, Line: 1, Col: 1}, Message: fmt.Sprintf(
			"the config is %d bytes; a loop config may be at most %d bytes (256 KiB)", len(src), MaxConfigSize)}
	}
	keys, stop := scanKeys(src, MaxNesting)
	switch {
	case stop != nil && stop.long:
		return nil, &Diagnostic{Pos: Position{File: file, Line: stop.line, Col: stop.col}, Message: fmt.Sprintf(
			"this key's path, with its tables', is more than %d bytes long; a loop config never needs one that long", MaxKeyPath)}
	case stop != nil:
		return nil, &Diagnostic{Pos: Position{File: file, Line: stop.line, Col: stop.col}, Message: fmt.Sprintf(
			"this value is nested more than %d levels deep (each table header or dotted key segment, inline table and array counts one); a loop config never needs that many",
			MaxNesting)}
	}
	return keys, nil
}
