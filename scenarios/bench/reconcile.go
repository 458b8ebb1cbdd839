package bench

import (
	"context"
	"fmt"

	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/queues"
)

// reconcileRun checks the delivery promises of one run with package
// reconcile: every published message ended in exactly one
// place, none reached the vendor twice, and the worker's records and
// ledger agree with WireMock's journal. It needs the worker stopped (the
// ledger is locked by a running worker, and a running consumer would take
// the messages reconcile.ReadQueues puts back). The journal is the one the
// bench already read, so journal_count and the verdict see the same
// requests. It also measures the run's settlement of UNKNOWN from the same
// gathering (results.MeasureSettlement: the ledger when ledgerPath is
// set, the unknown queue, the records); its Reports says whether the
// worker was given the vendor's delivery reports (wcfg.VendorReports). A
// gathering error is returned; a broken invariant is not an error, it is
// the report's verdict.
func (b *Bench) reconcileRun(ctx context.Context, topo queues.Topology, recordsPath, ledgerPath string,
	published []reconcile.Published, journal []vendormock.JournalEntry, reportsOn bool,
) (*reconcile.Report, *results.Settlement, error) {
	in, err := reconcile.Gather(ctx, reconcile.GatherOptions{
		Published:   published,
		RecordsPath: recordsPath,
		LedgerPath:  ledgerPath,
		AMQPURL:     b.stack.AMQPURL,
		Main:        topo.Names.Main,
		SendPath:    StackSendPath(b.stack),
		MaxAttempts: topo.MaxAttempts,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("reconcile: %w", err)
	}
	in.Journal = journal
	rep := reconcile.Reconcile(in)
	st := results.MeasureSettlement(in, topo.Names.Unknown, in.Records)
	st.Reports = reportsOn
	return &rep, &st, nil
}
