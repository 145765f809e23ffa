package loop

import "cmp"

// Memory says whether runs of a loop learn from earlier runs: at the end
// of each run generation (success, escalated, no-progress, a budget) the
// runner writes one entry built from what it measured, and builders' first
// prompts of a later run carry the latest entries as data. Judges never
// see them, and nothing of them reaches the gate.
type Memory struct {
	Enabled  bool `toml:"enabled" json:"enabled,omitempty" jsonschema_description:"Write one memory entry per run generation when it ends (success, escalated, no-progress, a budget; not when cancelled or awaiting review) and show builders the latest entries before the first dispatch. Off by default. Fork pull requests neither read nor write it."`
	Carry    int  `toml:"carry" json:"carry,omitempty" jsonschema:"minimum=0,maximum=20,default=3" jsonschema_description:"How many of the latest entries relevant to a builder's goals reach its prompt (0 = written but never shown)."`
	MaxBytes Size `toml:"max_bytes" json:"max_bytes,omitempty" jsonschema_description:"The most one entry takes in a prompt, e.g. \"4KiB\" (the default) or an integer of bytes, from 256 to 65536; a longer entry is cut and says so."`
}

// Bounds and defaults of [memory].
const (
	DefaultMemoryCarry    = 3
	MaxMemoryCarry        = 20
	DefaultMemoryMaxBytes = 4 << 10
	minMemoryBytes        = 256
	maxMemoryBytes        = 64 << 10
)

// EntryBytes is the most one entry takes in a prompt.
func (m Memory) EntryBytes() int { return int(cmp.Or(m.MaxBytes.Bytes, DefaultMemoryMaxBytes)) }

func (v *validator) memory() {
	m := v.c.Memory
	if m.Carry < 0 || m.Carry > MaxMemoryCarry {
		v.errorf("memory.carry", "memory.carry must be from 0 to %d, not %d", MaxMemoryCarry, m.Carry)
	}
	v.usable("memory.max_bytes", "memory.max_bytes", m.MaxBytes)
	if b := m.MaxBytes.Bytes; m.MaxBytes.problem() == "" && m.MaxBytes.IsSet() && (b < minMemoryBytes || b > maxMemoryBytes) {
		v.errorf("memory.max_bytes", "memory.max_bytes must be from %d to %d bytes, not %d", minMemoryBytes, maxMemoryBytes, b)
	}
}
