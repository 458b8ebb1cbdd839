package report

import (
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

// A summary states its settings in its title (issue 16: the summary of
// results/postgres-2workers never said PostgreSQL or two workers), and a
// sweep whose points capped COUNT prints the range it measured, never the
// key's name.
func TestSummaryStatesItsSettings(t *testing.T) {
	ok := &reconcile.Report{OK: true}
	rs := []results.Result{
		{Mode: "per-request", RTTMS: 3, Count: 200, Warmup: 50, TLSMax: "1.2", Workers: 2, Ledger: "postgres", Profile: "alimtalk", TCPHandshake: "on", Reconcile: ok},
		{Mode: "pooled", RTTMS: 380, Count: 39, Warmup: 6, Workers: 2, Ledger: "postgres", Profile: "alimtalk", TCPHandshake: "on", Reconcile: ok},
	}
	var b strings.Builder
	if err := NewMarkdownReporter(rs)(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	title, _, _ := strings.Cut(md, "\n")
	for _, want := range []string{"alimtalk profile", "https", "HTTP/1.1", "TCP_HANDSHAKE=on", "per-request TLS <= 1.2", "2 workers", "PostgreSQL ledger", "1 RabbitMQ node"} {
		if !strings.Contains(title, want) {
			t.Errorf("title %q does not say %q", title, want)
		}
	}
	if strings.Contains(md, "COUNT measured") || strings.Contains(md, "COUNT sends") || strings.Contains(md, "measured COUNT") {
		t.Errorf("the summary prints COUNT literally:\n%s", md)
	}
	if !strings.Contains(md, "39 to 200 measured sends after 6 to 50 warm-up sends") {
		t.Errorf("the summary does not give the measured range:\n%s", md)
	}
}
