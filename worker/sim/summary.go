package sim

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// WriteMarkdown writes the summary as a markdown page: a title, then
// WriteMarkdownBody (what the consume loop did included). firstSeed names
// the seed range.
func (s Summary) WriteMarkdown(w io.Writer, firstSeed uint64) error {
	return s.write(w, firstSeed, "# Simulation summary\n\n")
}

// WriteMarkdownBody writes the summary's tables as markdown, for a page
// that puts its own title above them (results/simulate/summary.md, with
// the run's provenance and verdict): the schedules, steps and invariant
// checks, the faults that fired by kind, the outcomes, and each failing
// seed with its invariant, shrunk schedule and trace. firstSeed names the
// seed range.
func (s Summary) WriteMarkdownBody(w io.Writer, firstSeed uint64) error {
	return s.write(w, firstSeed, "")
}

func (s Summary) write(w io.Writer, firstSeed uint64, title string) error {
	var b strings.Builder
	b.WriteString(title)
	fmt.Fprintf(&b, "| | |\n|---|---|\n| schedules | %d (seeds %d to %d) |\n| steps | %d |\n| invariant checks | %d |\n| failing seeds | %d |\n",
		s.Schedules, firstSeed, firstSeed+uint64(max(s.Schedules, 1))-1, s.Steps, s.Checks, len(s.Failures))
	fmt.Fprintf(&b, "\nInvariants judged (checker.go; after every step, the last two at quiescence): %s.\n", strings.Join(Invariants, ", "))
	if len(s.Errors) > 0 {
		fmt.Fprintf(&b, "| simulator errors | %d |\n", len(s.Errors))
	}
	table := func(title string, m map[string]int) {
		fmt.Fprintf(&b, "\n## %s\n\n| kind | count |\n|---|---|\n", title)
		ks := make([]string, 0, len(m))
		for k := range m {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		for _, k := range ks {
			fmt.Fprintf(&b, "| %s | %d |\n", k, m[k])
		}
	}
	table("Faults that fired", s.Faults)
	table("Outcomes and settlements", s.Outcomes)
	table("What the consume loop did", s.Loop)
	if len(s.Failures) > 0 {
		by := map[string][]uint64{}
		for _, f := range s.Failures {
			by[f.Violation.Invariant] = append(by[f.Violation.Invariant], f.Seed)
		}
		fmt.Fprintf(&b, "\n## Failing seeds by invariant\n\n| invariant | seeds | lowest |\n|---|---|---|\n")
		for _, inv := range Invariants {
			if seeds := by[inv]; len(seeds) > 0 {
				fmt.Fprintf(&b, "| %s | %d | %s |\n", inv, len(seeds), strings.Trim(fmt.Sprint(seeds[:min(10, len(seeds))]), "[]"))
			}
		}
		fmt.Fprintf(&b, "\n## Shrunk failures\n")
		for _, f := range s.Failures {
			if f.Trace != "" {
				fmt.Fprintf(&b, "\n### seed %d: %s\n\n```\n%s```\n", f.Seed, f.Violation.Invariant, f.String())
			}
		}
	}
	for _, err := range s.Errors {
		fmt.Fprintf(&b, "\nsimulator error: %v\n", err)
	}
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return fmt.Errorf("write simulation summary: %w", err)
	}
	return nil
}
