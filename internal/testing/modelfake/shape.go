package modelfake

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// Shape is the shape of an agent CLI's output, for holding a hand-written
// stand-in to what the real CLI prints: one "path: kind" line for every
// value in every JSON document of out — the whole of out when it is one
// document, else each line that is a JSON object (JSON lines) — sorted and
// without repeats. The paths of an object with a "type" start with it
// (`step_finish:part.tokens.input: number`), whether it is a line or the
// whole; arrays are "[]"; the keys of maps whose keys
// are names (models, tools, roles: mapKeys) are "*". Output that holds no
// JSON has no shape.
func Shape(out []byte) []string {
	set := map[string]bool{}
	var whole any
	if err := json.Unmarshal(bytes.TrimSpace(out), &whole); err == nil {
		// One object with a type is an event like a line of JSON lines
		// (Claude Code's result alone, or last in stream-json).
		prefix := ""
		if m, ok := whole.(map[string]any); ok {
			if typ, ok := m["type"].(string); ok {
				prefix = typ + ":"
			}
		}
		walk(set, prefix, whole)
	} else if v, ok := trailingObject(out); ok {
		walk(set, "", v)
	} else {
		for line := range bytes.Lines(out) {
			line = bytes.TrimSpace(line)
			var v map[string]any
			if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &v) != nil {
				continue
			}
			prefix, _ := v["type"].(string)
			walk(set, prefix+":", v)
		}
	}
	shape := make([]string, 0, len(set))
	for k := range set {
		shape = append(shape, k)
	}
	slices.Sort(shape)
	return shape
}

// mapKeys are the paths (in Shape's notation) of objects whose keys are
// names, not fields.
var mapKeys = []string{"modelUsage", "stats.models", "stats.models.*.roles", "stats.tools.byName",
	"stats.models.*.api.errorsByType"}

// walk adds the shape of v, at path, to set.
func walk(set map[string]bool, path string, v any) {
	join := func(k string) string {
		if path == "" || strings.HasSuffix(path, ":") {
			return path + k
		}
		return path + "." + k
	}
	switch v := v.(type) {
	case map[string]any:
		set[path+": object"] = true
		bare := path[strings.Index(path, ":")+1:]
		for k, e := range v {
			if slices.Contains(mapKeys, bare) {
				k = "*"
			}
			walk(set, join(k), e)
		}
	case []any:
		set[path+": array"] = true
		for _, e := range v {
			walk(set, path+"[]", e)
		}
	case string:
		set[path+": string"] = true
	case float64:
		set[path+": number"] = true
	case bool:
		set[path+": bool"] = true
	case nil:
		set[path+": null"] = true
	}
}

// trailingObject decodes the JSON object that starts at the beginning of
// one of out's lines and runs to its end, when out is more than that
// object and is not JSON lines.
func trailingObject(out []byte) (any, bool) {
	out = bytes.TrimSpace(out)
	for end := len(out); end > 0; {
		start := bytes.LastIndexByte(out[:end], '\n') + 1
		if out[start] == '{' && bytes.IndexByte(out[start:], '\n') >= 0 {
			var v map[string]any
			if json.Unmarshal(out[start:], &v) == nil {
				return v, true
			}
		}
		end = start - 1
	}
	return nil, false
}
