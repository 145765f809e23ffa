package provider

import (
	"bytes"
	"encoding/json"
)

// eachJSONLine decodes every line of stdout that is a JSON object into a
// fresh T and hands it to f, in order. Lines that are not JSON objects are
// skipped; a value of an unexpected type spoils only its own field.
func eachJSONLine[T any](stdout []byte, f func(T)) {
	for line := range bytes.Lines(stdout) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var v T
		if err := json.Unmarshal(line, &v); err != nil && !isTypeError(err) {
			continue
		}
		f(v)
	}
}
