package provider

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// regexBatch is how many matches parseUsageRegex asks for at a time, which
// bounds its memory on output with millions of matches (a pattern such as
// (?P<total>\d*) matches the empty string everywhere).
const regexBatch = 1 << 12

// regexMatch is the numbers read from one match of a usage regex, by the
// name of their group: input, output, total or cost.
type regexMatch map[string]float64

// parseUsageRegex reads usage from the last match of re in stdout that
// carries a number in one of its named groups input, output, total (tokens)
// and cost (USD). Numbers may have thousands separators (1,234), a k or M
// suffix (12.3k) and, for cost, a dollar sign ($0.05). Missing token counts
// are derived where they can be: Total from Input and Output, or one of
// those from Total and the other.
func parseUsageRegex(re *regexp.Regexp, stdout []byte) report {
	m, ok := lastRegexMatch(re, stdout)
	if !ok {
		return report{}
	}
	var rep report
	rep.CostUSD, rep.Cost = m["cost"]
	input, hasInput := m["input"]
	output, hasOutput := m["output"]
	total, hasTotal := m["total"]
	if !hasInput && !hasOutput && !hasTotal {
		return rep
	}
	in, out, sum := tokenCount(input), tokenCount(output), tokenCount(total)
	switch {
	case !hasTotal:
		sum = addTokens(in, out)
	case hasInput && !hasOutput && sum >= in:
		out = sum - in
	case hasOutput && !hasInput && sum >= out:
		in = sum - out
	}
	rep.Input, rep.Output, rep.Total, rep.Tokens = in, out, sum, true
	rep.TotalOnly = !hasInput && !hasOutput
	return rep
}

// lastRegexMatch finds the last match of re in stdout that yields a number.
// Matches are found as by FindAll; only after every regexBatch matches does
// the search restart on the rest of the text, where ^ and \b then see the
// start of the text.
func lastRegexMatch(re *regexp.Regexp, stdout []byte) (regexMatch, bool) {
	var best regexMatch
	for pos := 0; pos <= len(stdout); {
		text := stdout[pos:]
		locs := re.FindAllSubmatchIndex(text, regexBatch)
		for i := len(locs) - 1; i >= 0; i-- {
			if m := readRegexMatch(re, text, locs[i]); len(m) > 0 {
				best = m
				break
			}
		}
		if len(locs) < regexBatch {
			break
		}
		last := locs[len(locs)-1]
		pos += max(last[1], last[0]+1)
	}
	return best, best != nil
}

// readRegexMatch reads the named groups of one match that hold a number.
func readRegexMatch(re *regexp.Regexp, text []byte, loc []int) regexMatch {
	m := regexMatch{}
	for i, name := range re.SubexpNames() {
		if !slices.Contains(usageGroups, name) || 2*i+1 >= len(loc) || loc[2*i] < 0 {
			continue
		}
		if v, ok := parseAmount(string(text[loc[2*i]:loc[2*i+1]])); ok {
			m[name] = v
		}
	}
	return m
}

// usageGroups are the names of the groups a usage regex reads.
var usageGroups = []string{"input", "output", "total", "cost"}

// maxAmount bounds the numbers parseAmount accepts.
const maxAmount = 1e15

// parseAmount reads a number as agents print it: "1234", "1,234", "12.3k",
// "1.2M", "$0.05", with surrounding spaces and a trailing period or comma.
// It accepts only non-negative numbers up to maxAmount.
func parseAmount(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	s = strings.TrimRight(s, ".,")
	s = strings.TrimSpace(strings.TrimPrefix(s, "$"))
	mult := 1.0
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'k', 'K':
			mult = 1e3
		case 'm', 'M':
			mult = 1e6
		}
		if mult != 1 {
			s = strings.TrimSpace(s[:n-1])
		}
	}
	s = strings.NewReplacer(",", "", "_", "").Replace(s)
	if !isDecimal(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	f *= mult
	if math.IsInf(f, 0) || f > maxAmount {
		return 0, false
	}
	return f, true
}

// isDecimal reports whether s is digits with at most one decimal point.
func isDecimal(s string) bool {
	digits, points := 0, 0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == '.':
			points++
		default:
			return false
		}
	}
	return digits > 0 && points <= 1
}
