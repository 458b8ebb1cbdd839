package vendormock

import (
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// TestProfileReportsReachTheWorker: every profile's reports section is a
// document the worker accepts (vendorapi.ParseReportSpec), with the same
// meaning; alimtalk pushes and pulls, sms only pulls.
func TestProfileReportsReachTheWorker(t *testing.T) {
	for name, want := range map[string]struct{ push, pull, complete bool }{
		"alimtalk": {push: true, pull: true, complete: true},
		"sms":      {pull: true},
	} {
		p, err := LoadProfile("vendormock/profiles/" + name)
		if err != nil {
			t.Fatal(err)
		}
		s, err := vendorapi.ParseReportSpec(p.ReportsJSON)
		if err != nil {
			t.Fatalf("%s: the worker refuses the profile's reports: %v", name, err)
		}
		if got := (s.Push != nil); got != want.push || (s.Pull != nil) != want.pull || s.Complete != want.complete {
			t.Errorf("%s: push %v pull %v complete %v; want %+v", name, got, s.Pull != nil, s.Complete, want)
		}
		if s.HorizonDuration() <= 0 || s.RefKeyField != p.API.RefKeyField {
			t.Errorf("%s: horizon %s, refkey field %q; want > 0 and the send's %q", name, s.Horizon, s.RefKeyField, p.API.RefKeyField)
		}
	}
}

func TestReportsValidate(t *testing.T) {
	r := ReportsSpec{Push: &ReportPush{Auth: "md5", Header: "bad header"}, Pull: &ReportPull{Path: "/x"},
		Delivered: []string{"D"}, Failed: []string{"D"}, Horizon: "soon"}
	got := strings.Join(r.validate(), "\n")
	for _, key := range []string{"reports.push.auth", "reports.push.header", "reports.pull.path", "reports.refkey_field",
		"reports.result_field", "reports.failed: result \"D\" is also listed under delivered", "reports.horizon"} {
		if !strings.Contains(got, key) {
			t.Errorf("validate() does not name %s:\n%s", key, got)
		}
	}
	if probs := (&ReportsSpec{Pull: &ReportPull{Path: "/r/{refkey}"}, RefKeyField: "r", ResultField: "s",
		Delivered: []string{"D"}, Failed: []string{"F"}, Horizon: "1m"}).validate(); len(probs) != 0 {
		t.Errorf("a valid section: %v", probs)
	}
}
