package vendormock

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// TestReportBodyVerifies: the report the mock vendor pushes is one the
// worker accepts (its own parser and verifier), and a report signed under
// another secret or altered after signing is refused.
func TestReportBodyVerifies(t *testing.T) {
	p, err := LoadProfile(filepath.Join("profiles", "alimtalk"))
	if err != nil {
		t.Fatal(err)
	}
	spec, err := vendorapi.ParseReportSpec(p.ReportsJSON)
	if err != nil {
		t.Fatal(err)
	}
	secret := []byte("s3cret")
	body := p.ReportBody("rk-1")
	h := http.Header{}
	h.Set(p.Reports.Push.Header, p.SignReportBody(body, secret))
	if err := spec.VerifyPush(h, body, secret); err != nil {
		t.Fatalf("VerifyPush of the mock's report: %v", err)
	}
	rep, err := spec.ParseReport(body)
	if err != nil {
		t.Fatalf("ParseReport(%s): %v", body, err)
	}
	if rep.RefKey != "rk-1" || rep.Kind != vendorapi.ReportDelivered {
		t.Errorf("report = %+v, want refkey rk-1 delivered", rep)
	}
	if err := spec.VerifyPush(h, body, []byte("other")); err == nil {
		t.Error("VerifyPush under another secret: nil error, want forged")
	}
	if err := spec.VerifyPush(h, p.ReportBody("rk-2"), secret); err == nil {
		t.Error("VerifyPush of a body other than the signed one: nil error, want forged")
	}
}

// TestStartReportRelayRefuses: a profile without pushed reports, no
// target or a negative delay is an error, not a silent relay.
func TestStartReportRelayRefuses(t *testing.T) {
	sms, err := LoadProfile(filepath.Join("profiles", "sms"))
	if err != nil {
		t.Fatal(err)
	}
	alim, err := LoadProfile(filepath.Join("profiles", "alimtalk"))
	if err != nil {
		t.Fatal(err)
	}
	ok := ReportRelayOptions{Target: "http://127.0.0.1:1/reports", Secret: []byte("x")}
	for name, tc := range map[string]struct {
		p *Profile
		o ReportRelayOptions
	}{
		"sms pushes none": {sms, ok},
		"no target":       {alim, ReportRelayOptions{Secret: []byte("x")}},
		"no secret":       {alim, ReportRelayOptions{Target: ok.Target}},
		"negative delay":  {alim, ReportRelayOptions{Target: ok.Target, Secret: []byte("x"), Delay: -1}},
		"copies 11":       {alim, ReportRelayOptions{Target: ok.Target, Secret: []byte("x"), Copies: 11}},
	} {
		s := &Stack{Profile: tc.p}
		if r, err := s.StartReportRelay(tc.o); err == nil {
			r.Close()
			t.Errorf("%s: StartReportRelay succeeded, want an error", name)
		}
	}
}

// relayHarness runs a relay over a fixed journal of accepted sends against
// a receiver that verifies signatures as the worker does (trusting: it
// skips the check, a receiver that takes forgeries).
type relayHarness struct {
	mu      sync.Mutex
	bodies  map[string][]string // refkey -> results received, in order
	served  []StubSpec
	offered map[string]Offer // the relay's Offered after Close
}

func runRelay(t *testing.T, o ReportRelayOptions, accepted int, trusting bool, wait time.Duration) (ReportRelayStats, *relayHarness) {
	t.Helper()
	return runRelayLogged(t, o, accepted, trusting, wait, time.Time{})
}

// runRelayLogged is runRelay over a journal whose sends WireMock logged
// at loggedAt (zero: a journal without times).
func runRelayLogged(t *testing.T, o ReportRelayOptions, accepted int, trusting bool, wait time.Duration, loggedAt time.Time) (ReportRelayStats, *relayHarness) {
	t.Helper()
	p, err := LoadProfile(filepath.Join("profiles", "alimtalk"))
	if err != nil {
		t.Fatal(err)
	}
	spec, err := vendorapi.ParseReportSpec(p.ReportsJSON)
	if err != nil {
		t.Fatal(err)
	}
	h := &relayHarness{bodies: map[string][]string{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		if !trusting {
			if err := spec.VerifyPush(req.Header, body, o.Secret); err != nil {
				http.Error(w, "forged", http.StatusUnauthorized)
				return
			}
		}
		rep, err := spec.ParseReport(body)
		if err != nil {
			http.Error(w, "malformed", http.StatusBadRequest)
			return
		}
		h.mu.Lock()
		h.bodies[rep.RefKey] = append(h.bodies[rep.RefKey], rep.Result)
		h.mu.Unlock()
		_, _ = io.WriteString(w, `{"verdict":"settled"}`)
	}))
	defer srv.Close()
	var journal []JournalEntry
	for i := range accepted {
		journal = append(journal, JournalEntry{Method: http.MethodPost, Path: p.API.SendPath, Status: 200, RefKey: fmt.Sprintf("pre.%d", i), LoggedAt: loggedAt})
	}
	journal = append(journal, JournalEntry{Method: http.MethodPost, Path: p.API.SendPath, Status: 500, RefKey: "pre.rejected"},
		JournalEntry{Method: http.MethodPost, Path: p.API.SendPath, Status: 200, RefKey: "other.0"})
	o.Target, o.RefKeyPrefix, o.Poll = srv.URL+"/reports", "pre.", 10*time.Millisecond
	r, err := newReportRelay(&Stack{Profile: p, log: io.Discard}, o)
	if err != nil {
		t.Fatal(err)
	}
	r.journal = func(context.Context) ([]JournalEntry, error) { return journal, nil }
	r.serve = func(_ context.Context, s StubSpec) error {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.served = append(h.served, s)
		return nil
	}
	r.start()
	time.Sleep(wait)
	st := r.Close()
	h.offered = r.Offered()
	return st, h
}

// TestReportRelayCountsFromTheSendsLoggedTime: the vendor's delivery time
// runs from when WireMock logged the send, not from when the relay read
// the journal. A send logged 1 s before the relay first reads it, with a
// 1.2 s delay, is pushed about 0.2 s later; the same journal without
// times (the negative control: the relay's own reading time as the base)
// pushes nothing within 0.6 s. Offered and SlowestOfferMS say when.
func TestReportRelayCountsFromTheSendsLoggedTime(t *testing.T) {
	o := ReportRelayOptions{Secret: []byte("s3cret"), Delay: 1200 * time.Millisecond, Pull: true}
	logged := time.Now().Add(-time.Second)
	st, h := runRelayLogged(t, o, 3, false, 600*time.Millisecond, logged)
	if st.Pushed != 3 || st.Served != 3 {
		t.Fatalf("pushed %d served %d within 0.6 s of a send logged 1 s earlier with a 1.2 s delay, want 3 and 3", st.Pushed, st.Served)
	}
	for i := range 3 {
		k := fmt.Sprintf("pre.%d", i)
		of, ok := h.offered[k]
		if !of.Accepted.Equal(logged) {
			t.Errorf("%s accepted at %s, want the journal's %s", k, of.Accepted, logged)
		}
		if d := of.At.Sub(logged); !ok || d < o.Delay || d > o.Delay+400*time.Millisecond {
			t.Errorf("%s offered %s after its send (found %v), want %s to %s", k, d, ok, o.Delay, o.Delay+400*time.Millisecond)
		}
	}
	if ms := st.SlowestOfferMS; ms < 1200 || ms > 1600 {
		t.Errorf("slowest offer %.0f ms, want 1200..1600", ms)
	}
	st, h = runRelayLogged(t, o, 3, false, 600*time.Millisecond, time.Time{})
	if st.Pushed != 0 || len(h.offered) != 0 {
		t.Errorf("control, no logged time: pushed %d offered %d within 0.6 s, want 0 (the 1.2 s delay runs from the read)", st.Pushed, len(h.offered))
	}
}

// TestReportRelayVendorFaults: each option does what the scenarios rely on
// (counted by a receiver that checks signatures as the worker does).
func TestReportRelayVendorFaults(t *testing.T) {
	secret := []byte("s3cret")
	t.Run("copies and jitter: every report pushed twice", func(t *testing.T) {
		st, h := runRelay(t, ReportRelayOptions{Secret: secret, Copies: 2, Jitter: 50 * time.Millisecond}, 4, false, 300*time.Millisecond)
		if st.Accepted != 4 || st.Pushed != 8 {
			t.Errorf("accepted %d pushed %d, want 4 and 8", st.Accepted, st.Pushed)
		}
		for k, rs := range h.bodies {
			if len(rs) != 2 || rs[0] != "DELIVERED" || rs[1] != "DELIVERED" {
				t.Errorf("%s received %v, want DELIVERED twice", k, rs)
			}
		}
	})
	t.Run("dropped pushes still served for pull", func(t *testing.T) {
		st, h := runRelay(t, ReportRelayOptions{Secret: secret, DropEvery: 2, Pull: true}, 4, false, 300*time.Millisecond)
		if st.Dropped != 2 || st.Pushed != 2 || st.Served != 4 || len(h.bodies) != 2 {
			t.Errorf("dropped %d pushed %d served %d received %d, want 2 2 4 2", st.Dropped, st.Pushed, st.Served, len(h.bodies))
		}
		for _, s := range h.served {
			if s.Request.Method != http.MethodGet || !strings.HasPrefix(s.Request.URLPath, "/v3/report/pre.") || !strings.Contains(s.Response.Body, `"DELIVERED"`) {
				t.Errorf("pull stub %+v: want GET /v3/report/pre.N answering DELIVERED", s)
			}
		}
	})
	t.Run("interim reports", func(t *testing.T) {
		st, h := runRelay(t, ReportRelayOptions{Secret: secret, Interim: true, Jitter: 100 * time.Millisecond, Seed: 3}, 6, false, 400*time.Millisecond)
		if st.Pushed != 12 {
			t.Errorf("pushed %d, want 12 (6 final + 6 interim)", st.Pushed)
		}
		after := 0
		for k, rs := range h.bodies {
			if len(rs) != 2 || !slices.Contains(rs, "PENDING") || !slices.Contains(rs, "DELIVERED") {
				t.Errorf("%s received %v, want one PENDING and one DELIVERED", k, rs)
			}
			if len(rs) == 2 && rs[1] == "PENDING" {
				after++
			}
		}
		if after == 0 {
			t.Error("no interim report arrived after its final one: nothing was reordered")
		}
	})
	t.Run("forged reports refused by a verifying receiver", func(t *testing.T) {
		st, h := runRelay(t, ReportRelayOptions{Secret: secret, Forge: true}, 3, false, 300*time.Millisecond)
		if st.Forged != 3 || st.ForgedAccepted != 0 || st.Pushed != 3 {
			t.Errorf("forged %d forged accepted %d pushed %d, want 3 0 3", st.Forged, st.ForgedAccepted, st.Pushed)
		}
		for k, rs := range h.bodies {
			if len(rs) != 1 || rs[0] != "DELIVERED" {
				t.Errorf("%s received %v, want only the genuine DELIVERED", k, rs)
			}
		}
	})
	t.Run("negative control: a trusting receiver is caught", func(t *testing.T) {
		st, _ := runRelay(t, ReportRelayOptions{Secret: secret, Forge: true}, 3, true, 300*time.Millisecond)
		if st.ForgedAccepted != 3 || st.Forged != 0 {
			t.Errorf("forged accepted %d forged %d, want 3 and 0", st.ForgedAccepted, st.Forged)
		}
	})
}
