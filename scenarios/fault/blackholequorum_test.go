package fault

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// TestCatalogLedgerBlackholeQuorum: ledger-blackhole-quorum is
// ledger-blackhole on quorum queues and nothing else, so a ledger outage
// that burns the quorum queue's delivery limit shows as a difference
// between the two.
func TestCatalogLedgerBlackholeQuorum(t *testing.T) {
	scs, err := LoadCatalog(filepath.Join("..", "catalog"))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*Scenario{}
	for _, sc := range scs {
		byName[sc.Name] = sc
	}
	classic, quorum := byName["ledger-blackhole"], byName["ledger-blackhole-quorum"]
	if classic == nil || quorum == nil {
		t.Fatalf("catalog lacks ledger-blackhole (%v) or ledger-blackhole-quorum (%v)", classic != nil, quorum != nil)
	}
	if quorum.Workers == nil || quorum.Workers.QueueType != "quorum" {
		t.Fatalf("ledger-blackhole-quorum: workers %+v; want queue_type quorum", quorum.Workers)
	}
	w := *quorum.Workers
	w.QueueType = classic.Workers.QueueType
	if !reflect.DeepEqual(&w, classic.Workers) || !reflect.DeepEqual(quorum.Steps, classic.Steps) ||
		!reflect.DeepEqual(quorum.Expect, classic.Expect) || !reflect.DeepEqual(quorum.Client, classic.Client) ||
		!reflect.DeepEqual(quorum.Network, classic.Network) || !reflect.DeepEqual(quorum.Server, classic.Server) {
		t.Errorf("ledger-blackhole-quorum differs from ledger-blackhole beyond workers.queue_type")
	}
	if quorum.Expect.Lost != 0 || quorum.Expect.Duplicates != 0 || len(quorum.Expect.Outcomes) != 1 || !quorum.Expect.Outcomes[outcome.Sent].Match(20) {
		t.Errorf("ledger-blackhole-quorum expects %+v; want SENT 20 only, nothing lost, no duplicate", quorum.Expect)
	}
}
