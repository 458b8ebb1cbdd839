// Package records is the records file: JSON Lines, one Record per message a
// worker handled, appended by the worker and read by the bench, the fault
// runner, the progress display and the reconciler. It depends only on the
// standard library and the outcome vocabulary, so any reader (or a worker
// written in another language) can follow it without pulling in amqp or
// bbolt.
package records

import (
	"time"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// Record is one handled message, written by the worker as one JSON line
// (the -records file) and read by the lab's bench driver and reconciler.
//
// The JSON keys are a contract (docs/worker-contract.md): keep them; add
// fields freely. Readers ignore keys they do not know.
type Record struct {
	Seq         int             `json:"seq"`     // 1-based order in which this worker handled messages (continues after the file's last seq when a worker appends to an existing file)
	RefKey      string          `json:"refkey"`  // for INVALID: the body's "refkey" string if it has one, else ""
	Outcome     outcome.Outcome `json:"outcome"` // one of outcome.All
	Queue       string          `json:"queue"`   // where the message went ("" = acked)
	Error       string          `json:"error,omitempty"`
	Code        string          `json:"code,omitempty"` // vendor business code or HTTP status
	Redelivered bool            `json:"redelivered"`
	Start       time.Time       `json:"start"` // handling started (wall clock)
	End         time.Time       `json:"end"`   // outcome handled and acked
	// Trace of the send call (zero when nothing was sent).
	TotalMS        float64 `json:"total_ms"`
	ConnectMS      float64 `json:"connect_ms"`
	TLSHandshakeMS float64 `json:"tls_handshake_ms"`
	TTFBMS         float64 `json:"ttfb_ms"`
	Reused         bool    `json:"reused"`
	TLSVersion     string  `json:"tls_version"`
	GotConns       int     `json:"got_conns"`
	// Proto is the protocol the vendor answered with, "HTTP/1.1" or
	// "HTTP/2.0"; "" when no response came back.
	Proto string `json:"proto,omitempty"`
	// CPUMS is the worker process's cumulative user+sys CPU time
	// (getrusage RUSAGE_SELF) right after this message was handled, in ms.
	// CPU per send over a range = difference of two records' CPUMS.
	CPUMS float64 `json:"cpu_ms"`
	// SendCPUMS is the process's user+sys CPU spent during the vendor send
	// call of this message (token call included when one was made), in ms:
	// the client strategy's own cost, without the ledger, the broker and
	// the records. 0 when no send call was made. With concurrency 1 nothing
	// else of note runs during the call (AMQP heartbeats aside).
	SendCPUMS float64 `json:"send_cpu_ms"`

	// Optional fields.

	// TLSResumed says the send's new connection resumed a TLS session
	// (the per-request-resume strategy; vendorapi.Trace.TLSResumed).
	TLSResumed bool `json:"tls_resumed,omitempty"`

	// Replica names the worker replica that handled the message (WORKER_ID,
	// default the host name); with single active consumer it is the active
	// one.
	Replica string `json:"replica,omitempty"`

	// Category is the notification's category ("info", "ad"); "" when the
	// body could not be decoded.
	Category string `json:"category,omitempty"`
	// Attempt is the number of send attempts of this refkey so far,
	// including this one when it was sent (from the x-notifier-attempt
	// header and the ledger).
	Attempt int `json:"attempt,omitempty"`
	// Clock is the worker clock's reading the send window was judged by
	// (the -clock-start clock): when handling started, or, for an ad held
	// by the re-check just before the request (a Begin that ran across
	// the window's close), that re-check's reading.
	Clock time.Time `json:"clock"`
	// HeldUntil is when the send window opens, for OUTSIDE_SEND_WINDOW.
	HeldUntil time.Time `json:"held_until,omitzero"`
	// TokenFetched says the send fetched a token first.
	TokenFetched bool `json:"token_fetched,omitempty"`
	// WroteRequest says the request started to be written (httptrace).
	WroteRequest bool `json:"wrote_request,omitempty"`
	// Requeued: the re-publish (or the ledger) failed and the original was
	// nacked with requeue; the message will be handled again. The worker
	// writes no Record for a requeued delivery (it logs it instead), so
	// records count messages that ended in a place.
	Requeued bool `json:"requeued,omitempty"`
	// PublishError is the re-publish error (redacted) of a requeued message.
	PublishError string `json:"publish_error,omitempty"`
	// NoCall: the worker decided this outcome without calling its HTTP
	// client: an UNKNOWN from a ledger entry whose earlier attempt has no
	// recorded outcome (it may have reached the vendor, so this delivery
	// is not sent). The reconciler does not count such a record as a call
	// (docs/worker-contract.md#records).
	NoCall bool `json:"no_call,omitempty"`
	// AckError is set when the ack (or nack) could not be delivered, for
	// example the channel was lost; the broker redelivers the message and
	// the ledger keeps it from being sent twice.
	AckError string `json:"ack_error,omitempty"`
}
