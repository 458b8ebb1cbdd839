// Package figures checks that every figure in a README's results tables is
// in the committed file the table cites (issue 16, item 3; the rule is
// written up in docs/results.md, "Figures in the README").
//
// A table cites its source with an HTML comment on a line of its own
// before it:
//
//	<!-- figures: results/summary.md -->
//	| RTT | client | p50 ms |
//	|---|---|---|
//	| 3 ms | pooled | 23.5 |
//
// Every number in a data row (outside backticks) must appear as a number
// in one of the cited files (paths relative to the repository root,
// several separated by commas); thousands separators are ignored, so
// "1,050" matches 1050. A table with numbers and no citation is a problem
// too, so a figure cannot slip in uncited. It imports nothing of the lab.
package figures

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Problem is one figure (or one table) the check refuses.
type Problem struct {
	Line   int    // 1-based line of the README
	Figure string // the number as written; empty for a table without a citation
	Source string // the cited files, comma-separated; empty when none is cited
	Why    string
}

func (p Problem) String() string {
	if p.Figure == "" {
		return fmt.Sprintf("line %d: %s", p.Line, p.Why)
	}
	return fmt.Sprintf("line %d: %s %s (cited: %s)", p.Line, p.Figure, p.Why, p.Source)
}

var (
	marker = regexp.MustCompile(`^<!--\s*figures:\s*(.+?)\s*-->\s*$`)
	number = regexp.MustCompile(`\d[\d,]*(?:\.\d+)?`)
	code   = regexp.MustCompile("`[^`]*`")
)

// Check returns the problems of the markdown text readme, reading the
// cited files under root. An error means a cited file could not be read.
func Check(readme, root string) ([]Problem, error) {
	var problems []Problem
	lines := strings.Split(readme, "\n")
	cache := map[string]map[string]bool{}
	cited, citedAt := "", 0
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if m := marker.FindStringSubmatch(line); m != nil {
			cited, citedAt = m[1], i
			continue
		}
		if !strings.HasPrefix(line, "|") {
			if line != "" {
				cited = ""
			}
			continue
		}
		// A table: its header, its separator, then its data rows.
		start := i
		var rows []int
		for ; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "|"); i++ {
			if i >= start+2 {
				rows = append(rows, i)
			}
		}
		source := cited
		cited = ""
		var found []figureAt
		for _, r := range rows {
			for _, f := range numbers(lines[r]) {
				found = append(found, figureAt{r + 1, f})
			}
		}
		if len(found) == 0 {
			continue
		}
		if source == "" {
			problems = append(problems, Problem{Line: start + 1,
				Why: "table with figures cites no file: put <!-- figures: PATH --> on the line before it"})
			continue
		}
		known := map[string]bool{}
		for _, p := range strings.Split(source, ",") {
			p = strings.TrimSpace(p)
			set, ok := cache[p]
			if !ok {
				b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
				if err != nil {
					return nil, fmt.Errorf("figures: line %d cites %s: %w", citedAt+1, p, err)
				}
				set = map[string]bool{}
				for _, f := range number.FindAllString(string(b), -1) {
					set[normal(f)] = true
				}
				cache[p] = set
			}
			for f := range set {
				known[f] = true
			}
		}
		for _, f := range found {
			if !known[normal(f.figure)] {
				problems = append(problems, Problem{Line: f.line, Figure: f.figure, Source: source,
					Why: "is in none of the cited files"})
			}
		}
	}
	return problems, nil
}

type figureAt struct {
	line   int
	figure string
}

// numbers returns the numbers of a table row, leaving out code spans.
func numbers(row string) []string {
	return number.FindAllString(code.ReplaceAllString(row, ""), -1)
}

// normal drops thousands separators and a trailing comma.
func normal(f string) string { return strings.ReplaceAll(strings.TrimRight(f, ","), ",", "") }
