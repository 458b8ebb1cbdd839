package reconcile

import (
	"context"
	"net/http"

	"github.com/notifier-lab/notifier-lab/vendormock/journal"
)

// Journal reading lives in package vendormock/journal (shared with
// vendormock.Stack.Journal); these names keep the reconciler's API.
const (
	// DefaultRefKeyField is the JSON body field that carries the refkey.
	DefaultRefKeyField = journal.DefaultRefKeyField
	// DefaultRefKeyHeader is the correlation header ReadJournal falls back to.
	DefaultRefKeyHeader = journal.DefaultRefKeyHeader
	// DefaultHTTPTimeout bounds one call to WireMock's admin API.
	DefaultHTTPTimeout = journal.DefaultHTTPTimeout
)

var (
	// ErrJournalDisabled: WireMock runs with its request journal disabled.
	ErrJournalDisabled = journal.ErrDisabled
	// ErrJournalTruncated: WireMock kept fewer requests than it received.
	ErrJournalTruncated = journal.ErrTruncated
)

// ReadJournal fetches every request in WireMock's journal, oldest first
// (journal.Read).
func ReadJournal(ctx context.Context, c *http.Client, baseURL, refkeyField string) ([]JournalEntry, error) {
	return journal.Read(ctx, c, baseURL, refkeyField)
}

// bodyRefKey returns the string field of a JSON object body (journal.BodyField).
func bodyRefKey(body []byte, field string) string { return journal.BodyField(body, field) }
