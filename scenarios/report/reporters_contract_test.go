package report

import (
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

func TestContractSection(t *testing.T) {
	if s := contractSection([]results.Result{{Mode: "pooled", RTTMS: 3}}); s != "" {
		t.Errorf("contractSection of Go runs = %q; want empty", s)
	}
	// What the bench's check writes for a worker that left no records
	// file (bench.checkRecords, tested there).
	cc := &results.ContractCheck{Worker: "image:x", Image: "x", Expected: 5, Consumed: 5,
		Missing: []string{"wrote no records file (RECORDS=/out/records.jsonl, docs/worker-contract.md#records); 5 messages left the queue, their figures come from nginx and the journal"},
		Sources: map[string]string{"TLS version": results.SourceNginx, "CPU per send": results.SourceNotMeasure}}
	s := contractSection([]results.Result{{Mode: "image-x", RTTMS: 3, Contract: cc}})
	for _, want := range []string{"## Worker under test", "image:x at 3 ms", "stopped by the lab", "wrote no records file", "| TLS version | nginx access log |", "| CPU per send | not measured |"} {
		if !strings.Contains(s, want) {
			t.Errorf("section lacks %q:\n%s", want, s)
		}
	}
}
