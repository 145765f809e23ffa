package provider

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// regexBatch is how many matches parseUsageRegex asks for at a time, which
// bounds its memory on output with millions of matches (a pattern such as
// (?P<total>\d*) matches the empty string everywhere).
const regexBatch = 1 << 12

// regexMatch is the numbers read from one match of a usage regex.
type regexMatch struct {
	input, output, total, cost float64
	hasInput, hasOutput        bool
	hasTotal, hasCost          bool
}

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
	rep.CostUSD, rep.Cost = m.cost, m.hasCost
	if !m.hasInput && !m.hasOutput && !m.hasTotal {
		return rep
	}
	in, out, total := tokenCount(m.input), tokenCount(m.output), tokenCount(m.total)
	switch {
	case !m.hasTotal:
		total = addTokens(in, out)
	case m.hasInput && !m.hasOutput && total >= in:
		out = total - in
	case m.hasOutput && !m.hasInput && total >= out:
		in = total - out
	}
	rep.Input, rep.Output, rep.Total, rep.Tokens = in, out, total, true
	rep.TotalOnly = !m.hasInput && !m.hasOutput
	return rep
}

// lastRegexMatch finds the last match of re in stdout that yields a number.
// Matches are found as by FindAll; only after every regexBatch matches does
// the search restart on the rest of the text, where ^ and \b then see the
// start of the text.
func lastRegexMatch(re *regexp.Regexp, stdout []byte) (regexMatch, bool) {
	var best regexMatch
	found := false
	for pos := 0; pos <= len(stdout); {
		text := stdout[pos:]
		locs := re.FindAllSubmatchIndex(text, regexBatch)
		for i := len(locs) - 1; i >= 0; i-- {
			if m, ok := readRegexMatch(re, text, locs[i]); ok {
				best, found = m, true
				break
			}
		}
		if len(locs) < regexBatch {
			break
		}
		last := locs[len(locs)-1]
		pos += max(last[1], last[0]+1)
	}
	return best, found
}

// readRegexMatch reads the named groups of one match.
func readRegexMatch(re *regexp.Regexp, text []byte, loc []int) (regexMatch, bool) {
	var m regexMatch
	for i, name := range re.SubexpNames() {
		if name == "" || 2*i+1 >= len(loc) || loc[2*i] < 0 {
			continue
		}
		v, ok := parseAmount(string(text[loc[2*i]:loc[2*i+1]]))
		if !ok {
			continue
		}
		switch name {
		case "input":
			m.input, m.hasInput = v, true
		case "output":
			m.output, m.hasOutput = v, true
		case "total":
			m.total, m.hasTotal = v, true
		case "cost":
			m.cost, m.hasCost = v, true
		}
	}
	return m, m.hasInput || m.hasOutput || m.hasTotal || m.hasCost
}

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
