package worker

import (
	"github.com/notifier-lab/notifier-lab/worker/records"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// setTrace copies the send call's trace into r.
func setTrace(r *records.Record, t vendorapi.Trace) {
	r.TotalMS = t.TotalMS
	r.ConnectMS = t.ConnectMS
	r.TLSHandshakeMS = t.TLSHandshakeMS
	r.TTFBMS = t.TTFBMS
	r.Reused = t.Reused
	r.TLSVersion = t.TLSVersion
	r.TLSResumed = t.TLSResumed
	r.GotConns = t.GotConns
	r.Proto = t.Proto
	r.TokenFetched = t.TokenFetched
	r.WroteRequest = t.WroteRequest
}
