package sim

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

func newTestVendor(cfg Config) (*Vendor, *vendorapi.Client, *Clock) {
	clock := NewClock(noon)
	if cfg.TokenLife == 0 {
		cfg.TokenLife = time.Hour
	}
	v := NewVendor(clock, cfg, 1)
	c := vendorapi.NewClient("https://vendor.sim", vendorapi.Credentials{ClientID: "sim", ClientSecret: "s"},
		simStrategy{hc: &http.Client{Transport: v}}, vendorapi.WithClock(clock.Now))
	return v, c, clock
}

func note(refkey string) message.Notification {
	return message.Notification{RefKey: refkey, Category: message.Ad, Recipient: "+821000005678", TemplateCode: "T1",
		Text: "hi", CreatedAt: noon}
}

// TestVendorThroughTheRealClient: each send fault gives the class the
// real client derives from what the model did on the wire, and the truth
// the checker relies on.
func TestVendorThroughTheRealClient(t *testing.T) {
	cases := []struct {
		fault      string
		d          time.Duration
		class      outcome.Outcome
		processed  int
		doubt      bool
		retryAfter time.Duration
	}{
		{"", 0, outcome.Sent, 1, false, 0},
		{"lost-before-write", 0, outcome.NotSent, 0, false, 0},
		{"lost-after-process", 0, outcome.Unknown, 1, true, 0},
		{"lost-unprocessed", 0, outcome.Unknown, 0, true, 0},
		{"5xx-processed", 0, outcome.Unknown, 1, true, 0},
		{"5xx-unprocessed", 0, outcome.Unknown, 0, true, 0},
		{"429", 30 * time.Second, outcome.NotSent, 0, false, 30 * time.Second},
		{"401", 0, outcome.Sent, 1, false, 0}, // the client fetches a token and sends again
		{"reject", 0, outcome.Rejected, 0, false, 0},
		{"slow", time.Minute, outcome.Sent, 1, false, 0},
		{"token-error", 0, outcome.NotSent, 0, false, 0},
	}
	for _, c := range cases {
		name := c.fault
		if name == "" {
			name = "no fault"
		}
		t.Run(name, func(t *testing.T) {
			v, client, clock := newTestVendor(Config{})
			doubted := false
			v.doubt = func(string, string) { doubted = true }
			v.Arm(c.fault, c.d)
			_, err := client.Send(context.Background(), note("m1"))
			if got := vendorapi.ClassOf(err); got != c.class {
				t.Errorf("class %s (%v); want %s", got, err, c.class)
			}
			tr := v.Truth("m1")
			n := 0
			if tr != nil {
				n = len(tr.Processed)
			}
			if n != c.processed || doubted != c.doubt {
				t.Errorf("processed %d, doubt %t; want %d, %t", n, doubted, c.processed, c.doubt)
			}
			if se, ok := err.(*vendorapi.SendError); ok && se.RetryAfter != c.retryAfter {
				t.Errorf("Retry-After %s; want %s", se.RetryAfter, c.retryAfter)
			}
			if c.fault == "slow" && (tr.Processed[0].PostAt != noon || !tr.Processed[0].At.Equal(noon.Add(time.Minute)) || !clock.Now().Equal(noon.Add(time.Minute))) {
				t.Errorf("slow: POST at %s, processed at %s", tr.Processed[0].PostAt, tr.Processed[0].At)
			}
		})
	}
}

// TestVendorTokenSlowMovesThePost: a slow token call moves the clock, so
// the POST leaves later than the send started (the window defect's
// mechanism).
func TestVendorTokenSlowMovesThePost(t *testing.T) {
	v, client, _ := newTestVendor(Config{})
	v.Arm("token-slow", 90*time.Second)
	if _, err := client.Send(context.Background(), note("m1")); err != nil {
		t.Fatal(err)
	}
	if got := v.Truth("m1").Processed[0].PostAt; !got.Equal(noon.Add(90 * time.Second)) {
		t.Errorf("POST at %s; want 90 s after the start", got)
	}
}

// TestVendorReports: the pull answers not found before processing and
// before the report is ready, interim for a delayed vendor, then the
// final result.
func TestVendorReports(t *testing.T) {
	cfg := Config{Pull: true, Complete: true, Delayed: true, Horizon: 10 * time.Minute, ReportDelay: 30 * time.Second}
	spec, err := vendorapi.ParseReportSpec(NewVendor(NewClock(noon), cfg, 1).ReportSpec())
	if err != nil {
		t.Fatal(err)
	}
	// Find refkeys the seed makes delayed and not delayed.
	v, client, clock := newTestVendor(cfg)
	pull := func(k string) (vendorapi.Report, bool) {
		rep, found, err := client.PullReport(context.Background(), spec, k)
		if err != nil {
			t.Fatalf("pull %s: %v", k, err)
		}
		return rep, found
	}
	if _, found := pull("m1"); found {
		t.Error("a report for a refkey never sent")
	}
	for _, k := range []string{"m1", "m2", "m3", "m4"} {
		if _, err := client.Send(context.Background(), note(k)); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(time.Minute)
	kinds := map[vendorapi.ReportKind]int{}
	for _, k := range []string{"m1", "m2", "m3", "m4"} {
		rep, found := pull(k)
		if !found {
			t.Errorf("%s: no report a minute after processing (delay 30 s)", k)
			continue
		}
		kinds[rep.Kind]++
		if rep.Kind == vendorapi.ReportPending && v.Truth(k).FinalAt.Sub(v.Truth(k).Processed[0].At) <= cfg.Horizon {
			t.Errorf("%s: interim, but its final report is due within the horizon", k)
		}
	}
	if kinds[vendorapi.ReportPending] == 0 || kinds[vendorapi.ReportPending] == 4 {
		t.Errorf("report kinds %v; want some delayed (interim) and some final", kinds)
	}
	v.ArmPull("error")
	if _, _, err := client.PullReport(context.Background(), spec, "m1"); err == nil {
		t.Error("a pull fault did not fail the pull")
	}
}
