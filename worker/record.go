package worker

import "time"

// Record is one handled message, written by the worker as one JSON line
// (the -records file) and read by the lab's bench driver and reconciler.
//
// CONTRACT (written by the lead): keep the JSON keys; add fields freely.
type Record struct {
	Seq         int       `json:"seq"`     // 1-based order in which this worker handled messages
	RefKey      string    `json:"refkey"`  // "" when the body could not be decoded
	Outcome     string    `json:"outcome"` // SENT, REJECTED, NOT_SENT, UNKNOWN, OUTSIDE_SEND_WINDOW, INVALID, DUPLICATE
	Queue       string    `json:"queue"`   // where the message went ("" = acked)
	Error       string    `json:"error,omitempty"`
	Code        string    `json:"code,omitempty"` // vendor business code or HTTP status
	Redelivered bool      `json:"redelivered"`
	Start       time.Time `json:"start"` // handling started (wall clock)
	End         time.Time `json:"end"`   // outcome handled and acked
	// Trace of the send call (zero when nothing was sent).
	TotalMS        float64 `json:"total_ms"`
	ConnectMS      float64 `json:"connect_ms"`
	TLSHandshakeMS float64 `json:"tls_handshake_ms"`
	TTFBMS         float64 `json:"ttfb_ms"`
	Reused         bool    `json:"reused"`
	TLSVersion     string  `json:"tls_version"`
	GotConns       int     `json:"got_conns"`
	// CPUMS is the worker process's cumulative user+sys CPU time
	// (getrusage RUSAGE_SELF) right after this message was handled, in ms.
	// CPU per send over a range = difference of two records' CPUMS.
	CPUMS float64 `json:"cpu_ms"`
}
