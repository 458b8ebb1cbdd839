package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

// contractSection returns the summary's section on the contract workers'
// runs (Result.Contract): for each, what of docs/worker-contract.md it did
// not keep, and a table of where each figure comes from (the worker's
// records or outside it: nginx, WireMock's journal, the queues). "" when
// every run is the Go worker's.
func contractSection(rs []results.Result) string {
	var b strings.Builder
	for _, r := range rs {
		cc := r.Contract
		if cc == nil {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("\n## Worker under test\n\n")
		}
		fmt.Fprintf(&b, "### %s at %d ms (image %s)\n\n", cc.Worker, r.RTTMS, cc.Image)
		exit := "stopped by the lab"
		if cc.ExitCode != nil {
			exit = fmt.Sprintf("exit status %d", *cc.ExitCode)
		}
		fmt.Fprintf(&b, "%d messages published, %d left the main queue, %d records written; %s.\n\n", cc.Expected, cc.Consumed, cc.Records, exit)
		if len(cc.Missing) == 0 {
			b.WriteString("It kept every part of the worker contract the lab checks.\n\n")
		} else {
			b.WriteString("What it did not keep of the worker contract (docs/worker-contract.md):\n\n")
			for _, m := range cc.Missing {
				b.WriteString("- " + m + "\n")
			}
			b.WriteString("\n")
		}
		b.WriteString("| figure | source |\n|---|---|\n")
		for _, k := range slices.Sorted(maps.Keys(cc.Sources)) {
			fmt.Fprintf(&b, "| %s | %s |\n", k, cc.Sources[k])
		}
	}
	return b.String()
}
