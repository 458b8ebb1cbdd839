package vendormock

import (
	"net/http"
	"path/filepath"
	"testing"

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
	} {
		s := &Stack{Profile: tc.p}
		if r, err := s.StartReportRelay(tc.o); err == nil {
			r.Close()
			t.Errorf("%s: StartReportRelay succeeded, want an error", name)
		}
	}
}
