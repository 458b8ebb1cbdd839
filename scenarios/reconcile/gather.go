package reconcile

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// Sources named by GatherError.Source.
const (
	SourcePublished = "published"
	SourceRecords   = "records"
	SourceLedger    = "ledger"
	SourceQueues    = "queues"
	SourceJournal   = "journal"
)

// GatherError says which source Gather could not read. Err wraps the
// cause (ErrMalformedLine, ledger.ErrLocked, ErrQueueInUse, ErrNoQueue,
// ErrJournalDisabled, ...).
type GatherError struct {
	Source string // one of the Source* names
	Err    error
}

// Error says which source failed and why.
func (e *GatherError) Error() string { return "gather " + e.Source + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *GatherError) Unwrap() error { return e.Err }

// ErrNoPublished: GatherOptions names no published list.
var ErrNoPublished = errors.New("no published list: set Published or PublishedPath")

// GatherOptions say where Gather finds each part of the Input. An empty
// path or URL skips that part (its checks are then skipped, see
// Report.Checks); only the published list is required.
type GatherOptions struct {
	// Published is the published list; when nil it is read from
	// PublishedPath (JSON lines, see WritePublished).
	Published     []Published
	PublishedPath string
	// RecordsPath is the worker's -records file (JSON lines of
	// records.Record).
	RecordsPath string
	// LedgerPath is the worker's ledger file, read from a copy (ReadLedger).
	LedgerPath string
	// AMQPURL is the broker (host URL, e.g. vendormock.Stack.AMQPURL);
	// every queue of queues.NamesFor(Main) is read without consuming
	// (ReadQueues).
	AMQPURL string
	// Main is the main queue; "" = queues.DefaultMain.
	Main string
	// WireMockURL is WireMock's base URL (vendormock.Stack.WireMockURL),
	// its journal read through the admin API (ReadJournal).
	WireMockURL string
	// RefKeyField is the send body's refkey field; "" = DefaultRefKeyField.
	RefKeyField string
	// SendPath is the vendor's send path; "" = DefaultSendPath.
	SendPath string
	// MaxAttempts is the worker's MAX_ATTEMPTS (Input.MaxAttempts); 0 =
	// queues.DefaultMaxAttempts.
	MaxAttempts int
	// HTTPClient calls WireMock; nil = a client with DefaultHTTPTimeout.
	HTTPClient *http.Client
}

// Gather reads every source o names into an Input for Reconcile: the
// published list, the worker's records, its ledger (ReadLedger), every
// queue of queues.NamesFor(o.Main) (ReadQueues) and WireMock's journal
// (ReadJournal). The worker must be stopped (its ledger lock, its
// consumer). Input.Names is always set. Errors: ErrNoPublished, or a
// *GatherError naming the first source that failed.
//
// The bench driver calls it after a run, with the worker stopped:
//
//	in, err := reconcile.Gather(ctx, reconcile.GatherOptions{
//		PublishedPath: pubFile, RecordsPath: recFile, LedgerPath: ledgerFile,
//		AMQPURL: stack.AMQPURL, WireMockURL: stack.WireMockURL,
//	})
//	report := reconcile.Reconcile(in)
func Gather(ctx context.Context, o GatherOptions) (Input, error) {
	in := Input{
		Names:       queues.NamesFor(cmp.Or(o.Main, queues.DefaultMain)),
		SendPath:    o.SendPath,
		MaxAttempts: o.MaxAttempts,
	}
	fail := func(source string, err error) (Input, error) {
		return Input{}, &GatherError{Source: source, Err: err}
	}
	switch {
	case o.Published != nil:
		in.Published = o.Published
	case o.PublishedPath != "":
		p, err := ReadPublishedFile(o.PublishedPath)
		if err != nil {
			return fail(SourcePublished, err)
		}
		in.Published = p
	default:
		return Input{}, ErrNoPublished
	}
	if o.RecordsPath != "" {
		r, err := records.ReadFile(o.RecordsPath)
		if err != nil {
			return fail(SourceRecords, err)
		}
		in.Records = r
	}
	if o.LedgerPath != "" {
		l, err := ReadLedger(o.LedgerPath)
		if err != nil {
			return fail(SourceLedger, err)
		}
		in.Ledger = l
	}
	if o.AMQPURL != "" {
		q, err := ReadQueues(ctx, o.AMQPURL, in.Names.All())
		if err != nil {
			return fail(SourceQueues, err)
		}
		in.Queues = q
	}
	if o.WireMockURL != "" {
		j, err := ReadJournal(ctx, o.HTTPClient, o.WireMockURL, o.RefKeyField)
		if err != nil {
			return fail(SourceJournal, err)
		}
		in.Journal = j
	}
	return in, nil
}

// String names the sources o reads, for logs.
func (o GatherOptions) String() string {
	s := fmt.Sprintf("published=%s", cmp.Or(o.PublishedPath, "(in memory)"))
	for _, kv := range [][2]string{{"records", o.RecordsPath}, {"ledger", o.LedgerPath}, {"amqp", redactURL(o.AMQPURL)}, {"wiremock", o.WireMockURL}} {
		if kv[1] != "" {
			s += " " + kv[0] + "=" + kv[1]
		}
	}
	return s
}
