package reports

import (
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/ledger"
)

// MaxReportBytes bounds a pushed report's body (64 KiB); a longer one is
// refused as malformed.
const MaxReportBytes = 64 << 10

// Handler receives pushed reports (POST, any path it is mounted on):
//
//	401 forged:    the spec's signature or secret header is missing or wrong
//	               (vendorapi.ReportSpec.VerifyPush); nothing is read further
//	400 malformed: not a report of the spec's shape, or longer than MaxReportBytes
//	503:           the ledger or the journal failed; the vendor should push again
//	503 {"verdict": "in_flight"}, Retry-After = MinAge in seconds: the refkey's
//	               attempt may still be finishing; kept, push it again later
//	200 {"verdict": ...}: applied (Resolver.Apply with ledger.SourceReport)
//
// Every refusal is logged ("refused delivery report") with the reason and
// the peer, and counted in notifier_worker_reports_refused_total. secret is
// the shared secret; now is the clock (time.Now when nil).
func (r *Resolver) Handler(secret []byte, now func() time.Time) http.Handler {
	if now == nil {
		now = time.Now
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "POST a delivery report", http.StatusMethodNotAllowed)
			return
		}
		refuse := func(status int, reason string, err error) {
			r.log().Warn("refused delivery report", "reason", reason, "error", err.Error(), "peer", req.RemoteAddr)
			r.Metrics.refuse(reason)
			http.Error(w, reason+" report refused", status)
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, MaxReportBytes))
		if err != nil {
			refuse(http.StatusBadRequest, RefusedMalformed, err)
			return
		}
		if err := r.Spec.VerifyPush(req.Header, body, secret); err != nil {
			refuse(http.StatusUnauthorized, RefusedForged, err)
			return
		}
		rep, err := r.Spec.ParseReport(body)
		if err != nil {
			refuse(http.StatusBadRequest, RefusedMalformed, err)
			return
		}
		v, err := r.Apply(req.Context(), rep, ledger.SourceReport, now())
		if err != nil {
			r.log().Error("delivery report not applied; the vendor should push it again", "refkey", rep.RefKey, "error", err.Error())
			http.Error(w, "report not recorded, push it again", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if v == InFlight {
			// Kept, but not applied: ask a pushing vendor to come back once
			// the attempt is old enough to be settled.
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(r.MinAge.Seconds()))))
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"verdict": string(v)})
	})
}
