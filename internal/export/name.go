package export

import "strings"

// maxNameLen bounds a sanitised name so that "<name>-success" fits the
// 64 characters the Agent Skills format allows a skill's name (and stays
// far inside any file-name limit).
const maxNameLen = 64 - len("-success")

// SanitizeName maps a loop name to [A-Za-z0-9_-]: every other rune becomes
// '-', runs of '-' collapse to one, leading and trailing '-' are trimmed,
// and the result is cut to 56 bytes. An empty result becomes "loop".
func SanitizeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if !nameRune(r) {
			r = '-'
		}
		if r == '-' && strings.HasSuffix(b.String(), "-") {
			continue
		}
		b.WriteRune(r)
	}
	name := strings.Trim(b.String(), "-")
	if len(name) > maxNameLen {
		name = strings.TrimRight(name[:maxNameLen], "-")
	}
	if name == "" {
		return "loop"
	}
	return name
}

func nameRune(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '-'
}
