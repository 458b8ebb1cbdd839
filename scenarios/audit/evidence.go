package audit

import (
	"fmt"
	"regexp"
	"strings"
)

// SummaryMax is the most characters of a rule's one-line evidence
// (Rule.Summary) in a page's failures block; the rule's row keeps the
// whole evidence.
const SummaryMax = 240

var (
	// waitMapRE is a wait step's condition as fault results written
	// before the fix printed it: "records>=0 outcomes>=map[SENT:200]
	// journal>=0".
	waitMapRE = regexp.MustCompile(`records>=(\d+) outcomes>=map\[([^\]]*)\] journal>=(\d+)`)
	// goMapRE is any other Go map printed with %v: "map[SENT:2 UNKNOWN:1]".
	goMapRE = regexp.MustCompile(`map\[([^\]]*)\]`)
)

// plainCounts rewrites Go map syntax that result files carry in their
// failure strings into the lab's count wording, as the wait step writes
// it now: "records>=0 outcomes>=map[SENT:200 UNKNOWN:1] journal>=0" reads
// "records>=0, SENT>=200, UNKNOWN>=1, journal>=0"; any other "map[A:1
// B:2]" reads "A 1, B 2", "map[]" reads "none".
func plainCounts(s string) string {
	pairs := func(body, sep string) string {
		var out []string
		for _, kv := range strings.Fields(body) {
			k, v, ok := strings.Cut(kv, ":")
			if !ok {
				out = append(out, kv)
				continue
			}
			out = append(out, k+sep+v)
		}
		if len(out) == 0 {
			return "none"
		}
		return strings.Join(out, ", ")
	}
	s = waitMapRE.ReplaceAllStringFunc(s, func(m string) string {
		g := waitMapRE.FindStringSubmatch(m)
		if g[2] == "" {
			return "records>=" + g[1] + ", journal>=" + g[3]
		}
		return "records>=" + g[1] + ", " + pairs(g[2], ">=") + ", journal>=" + g[3]
	})
	return goMapRE.ReplaceAllStringFunc(s, func(m string) string {
		return pairs(goMapRE.FindStringSubmatch(m)[1], " ")
	})
}

// oneLine returns s on one line, cut at the last "; " or ", " before max
// characters with a note that the rule's row has the rest.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= max {
		return s
	}
	cut := s[:max]
	if i := strings.LastIndex(cut, "; "); i > max/3 {
		cut = cut[:i]
	} else if i := strings.LastIndex(cut, ", "); i > max/3 {
		cut = cut[:i]
	}
	return cut + " (more on the rule's row)"
}

// summary is the rule's evidence in one line for a failures block: its
// Summary when the rule wrote one, else its evidence cut to SummaryMax.
func (r Rule) summary() string {
	if r.Summary != "" {
		return oneLine(r.Summary, SummaryMax)
	}
	return oneLine(r.Evidence, SummaryMax)
}

// failureLine is one line of a failures block: the rule, its verdict and
// its evidence in one line.
func failureLine(r Rule) string {
	return fmt.Sprintf("%s: %s: %s", r.Name, r.Verdict, r.summary())
}

// firstClause returns s up to its first "; " (the headline of a failure
// string whose details follow).
func firstClause(s string) string {
	head, _, _ := strings.Cut(s, "; ")
	return head
}
