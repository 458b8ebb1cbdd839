package bench

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/queues"
)

func TestLineProgress(t *testing.T) {
	var b bytes.Buffer
	p := NewProgress(&b, "pooled 10 ms", 200) // a bytes.Buffer is not a terminal
	for done := 0; done <= 200; done += 7 {
		p.Set(done)
	}
	p.Set(200)
	p.Finish()
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 10 {
		t.Fatalf("got %d lines; want one per 10%%:\n%s", len(lines), b.String())
	}
	if !strings.HasPrefix(lines[0], "pooled 10 ms: 21/200 handled (10%)") {
		t.Errorf("first line %q", lines[0])
	}
	if !strings.HasPrefix(lines[9], "pooled 10 ms: 200/200 handled (100%)") {
		t.Errorf("last line %q", lines[9])
	}
}

func TestBenchMessageIsValid(t *testing.T) {
	now := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	seen := map[string]bool{}
	for _, i := range []int{0, 1, 1049, 123456789} {
		key := RefKey("20261130T030000-00ff", "per-request", 10, i < 50, i+1)
		body, err := benchMessage(key, i, now)
		if err != nil {
			t.Fatal(err)
		}
		n, err := message.Decode(body)
		if err != nil {
			t.Fatalf("message %d does not decode: %v", i, err)
		}
		if n.RefKey != key || n.Category != message.Info {
			t.Errorf("message %d = refkey %q category %q", i, n.RefKey, n.Category)
		}
		if seen[n.Recipient] {
			t.Errorf("message %d reuses a recipient", i)
		}
		seen[n.Recipient] = true
	}
}

func TestWorkerConfig(t *testing.T) {
	st := &vendormock.Stack{
		AMQPURLNetwork: "amqp://guest:guest@rabbitmq:5672/", AMQPURLsNetwork: "amqp://guest:guest@rabbitmq:5672/", VendorURL: "https://api.vendor.test",
		ClientID: "lab-client", ClientSecret: "s3cret-value", KeepaliveTimeout: 75 * time.Second,
	}
	b := NewBench(PointOptions{Config: Config{PerRequestTLS: "1.2"}, Stack: st})
	topo := queues.DefaultTopology(queues.DefaultMain)
	base := worker.Config{
		AMQPURL: st.AMQPURLsNetwork, Queue: "notifications", RetryDelay: topo.RetryDelay, MaxAttempts: topo.MaxAttempts,
		VendorURL: st.VendorURL, CAFile: "/lab/ca.pem", ClientID: "lab-client",
		RecordsPath: "/out/records.jsonl", LedgerPath: "/out/ledger.db", MaxMessages: 1050, Concurrency: 1, HTTPVersion: "1.1",
	}
	perRequest, pooled := base, base
	perRequest.Strategy, perRequest.TLSMax = "per-request", "1.2"
	pooled.Strategy, pooled.IdleConnTimeout = "pooled", 73990*time.Millisecond
	tests := []struct {
		mode     string
		rtt      int
		want     worker.Config
		wantIdle time.Duration
	}{
		{"per-request", 10, perRequest, 0},
		{"pooled", 10, pooled, 73990 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			c, idle, err := b.workerConfig(topo, tt.mode, tt.rtt, 1050)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c, tt.want) {
				t.Errorf("workerConfig = %+v\nwant %+v", c, tt.want)
			}
			if strings.Contains(strings.Join(c.Args(), " "), st.ClientSecret) {
				t.Error("the client secret is in the worker's arguments; it must go by environment only")
			}
			if idle != tt.wantIdle {
				t.Errorf("idle = %s; want %s", idle, tt.wantIdle)
			}
		})
	}
	short := NewBench(PointOptions{Stack: &vendormock.Stack{KeepaliveTimeout: time.Second}})
	if _, _, err := short.workerConfig(topo, "pooled", 10, 10); err == nil {
		t.Error("pooled with keepalive_timeout 1s: want an error")
	}
}

func TestResolveProfile(t *testing.T) {
	// From scenarios/bench, the default profile is found relative to the module root.
	if _, err := os.Stat("../../" + DefaultProfile); err != nil {
		t.Fatalf("the default profile is not where the test expects it: %v", err)
	}
	got, err := ResolveProfile(DefaultProfile)
	if err != nil || !strings.HasSuffix(got, DefaultProfile) {
		t.Errorf("ResolveProfile(default) = %q, %v", got, err)
	}
	dir := t.TempDir()
	if got, err := ResolveProfile(dir); err != nil || got != dir {
		t.Errorf("ResolveProfile(abs) = %q, %v", got, err)
	}
	if _, err := ResolveProfile("no/such/profile"); err == nil {
		t.Error("ResolveProfile(missing): want an error")
	}
}

func TestWorkerTimeout(t *testing.T) {
	got := WorkerTimeout(1050, 10, 18)
	if got < 3*time.Minute || got > 6*time.Minute {
		t.Errorf("WorkerTimeout(1050, 10 ms, 18 ms) = %s; want a few minutes", got)
	}
	if WorkerTimeout(10, 3, 18) >= WorkerTimeout(1000, 3, 18) {
		t.Error("WorkerTimeout must grow with the message count")
	}
}

func TestRunErrorUnwraps(t *testing.T) {
	err := error(&RunError{Mode: "pooled", RTTMS: 10, Step: "wait worker", WorkerLogs: "line1\nline2", Err: ErrWorkerTimeout})
	if !errors.Is(err, ErrWorkerTimeout) {
		t.Error("RunError does not unwrap to its sentinel")
	}
	for _, s := range []string{"pooled at 10 ms", "wait worker", "worker timed out", "line2"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%q lacks %q", err, s)
		}
	}
}

func TestHelpers(t *testing.T) {
	env := DescribeEnvironment(vendormock.Images{Kind: "offline", Worker: "w:1"}, "rack 7")
	if env.GoVersion == "" || env.CPUs < 1 || env.Images.Worker != "w:1" || env.Images.Kind != "offline" || !strings.HasSuffix(env.HostNote, "rack 7") {
		t.Errorf("DescribeEnvironment = %+v; want the images and the host note", env)
	}
	// The note comes from the caller, not from LAB_HOST_NOTE.
	t.Setenv("LAB_HOST_NOTE", "from the environment")
	if env := DescribeEnvironment(vendormock.Images{}, ""); strings.Contains(env.HostNote, "from the environment") {
		t.Errorf("DescribeEnvironment read LAB_HOST_NOTE: %q", env.HostNote)
	}
	if id := NewRunID(); !strings.Contains(id, "T") || len(id) != len("20261130T030405-1a2b") {
		t.Errorf("NewRunID = %q", id)
	}
}

// TestRunWithoutImagesStartsNothing: a Config without images fails
// before anything starts, even when the environment names every image
// (Run reads Config.Images, never LAB_IMAGE_*: the command reads them).
func TestRunWithoutImagesStartsNothing(t *testing.T) {
	for _, k := range []string{"LAB_IMAGE_RABBITMQ", "LAB_IMAGE_NGINX", "LAB_IMAGE_WIREMOCK", "LAB_IMAGE_TOXIPROXY", "LAB_IMAGE_WORKER"} {
		t.Setenv(k, "planted:1")
	}
	cfg := DefaultConfig()
	cfg.Out = filepath.Join(t.TempDir(), "results")
	var b bytes.Buffer
	err := Run(t.Context(), cfg, &b)
	if err == nil || !strings.Contains(err.Error(), "run.sh") {
		t.Fatalf("Run without images = %v; want an error that says to run ./run.sh", err)
	}
	if _, serr := os.Stat(cfg.Out); serr == nil {
		t.Error("Run created OUT although it could not start")
	}
	if b.Len() != 0 {
		t.Errorf("Run printed %q before failing", b.String())
	}
}

// fakeWorker appends lines records to a file, one every step, then exits
// with code; with hang it never exits.
type fakeWorker struct {
	path  string
	lines int
	step  time.Duration
	code  int
	hang  bool
}

func (f *fakeWorker) Wait(ctx context.Context) (int, error) {
	for i := 0; i < f.lines; i++ {
		select {
		case <-ctx.Done():
			return -1, ctx.Err()
		case <-time.After(f.step):
		}
		fh, err := os.OpenFile(f.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return -1, err
		}
		fh.WriteString(`{"seq":1}` + "\n")
		fh.Close()
	}
	if f.hang {
		<-ctx.Done()
		return -1, ctx.Err()
	}
	return f.code, nil
}

func TestWaitWorker(t *testing.T) {
	tests := []struct {
		name    string
		w       fakeWorker
		timeout time.Duration
		cancel  bool
		wantErr error // nil = success
	}{
		{"all handled, exit 0", fakeWorker{lines: 20, step: time.Millisecond}, 0, false, nil},
		{"exit 0 too early", fakeWorker{lines: 5, step: time.Millisecond}, 0, false, ErrWorkerExit},
		{"exit 1", fakeWorker{lines: 20, step: time.Millisecond, code: 1}, 0, false, ErrWorkerExit},
		{"stalls", fakeWorker{lines: 3, step: time.Millisecond, hang: true}, 0, false, ErrWorkerTimeout},
		{"too slow overall", fakeWorker{lines: 20, step: 100 * time.Millisecond}, 300 * time.Millisecond, false, ErrWorkerTimeout},
		{"cancelled", fakeWorker{lines: 20, step: 50 * time.Millisecond}, 0, true, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := tt.w
			w.path = filepath.Join(t.TempDir(), "records.jsonl")
			var out bytes.Buffer
			lim := waitLimits{timeout: tt.timeout, stall: 500 * time.Millisecond}
			if lim.timeout == 0 {
				lim.timeout = WorkerTimeout(20, 10, 18)
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tt.cancel {
				time.AfterFunc(120*time.Millisecond, cancel)
			}
			err := waitWorker(ctx, &out, &w, w.path, "pooled 10 ms", 20, limitWatch(20, lim, nil))
			if tt.wantErr == nil && err != nil {
				t.Fatalf("waitWorker = %v; want nil", err)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("waitWorker = %v; want %v", err, tt.wantErr)
			}
			if tt.wantErr == nil && !strings.Contains(out.String(), "20/20 handled (100%)") {
				t.Errorf("progress lines %q lack the last step", out.String())
			}
		})
	}
}

// TestMalformedMessages: every kind of MALFORMED message is refused by the
// worker's decoder, and its refkey is empty or its message id (the
// published list marks it invalid, so Metrics never counts it).
func TestMalformedMessages(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	for i := 1; i <= len(malformedKinds); i++ {
		id, body, refkey := malformedMessage("run", "pooled", 3, i, now)
		t.Run(malformedKinds[i-1], func(t *testing.T) {
			_, err := message.Decode(body)
			var inv *message.InvalidError
			if !errors.As(err, &inv) || inv.Reason == "" {
				t.Fatalf("Decode(%q) = %v; want an *InvalidError with a reason", body, err)
			}
			if refkey != "" && refkey != id {
				t.Errorf("id %q refkey %q: want the refkey empty or the id", id, refkey)
			}
		})
	}
}

// TestOutcomeWarning: malformed messages ending INVALID are expected, not a
// reason to warn; a valid message not SENT, or a malformed one not
// INVALID, is.
func TestOutcomeWarning(t *testing.T) {
	tests := []struct {
		name      string
		outcomes  map[outcome.Outcome]int
		valid     int
		malformed int
		want      string // substring; "" = no warning
	}{
		{"all sent", map[outcome.Outcome]int{outcome.Sent: 1050}, 1050, 0, ""},
		{"malformed dead-lettered", map[outcome.Outcome]int{outcome.Sent: 1050, outcome.Invalid: 12}, 1050, 12, ""},
		{"a valid one unknown", map[outcome.Outcome]int{outcome.Sent: 1049, outcome.Unknown: 1, outcome.Invalid: 12}, 1050, 12, "valid message was SENT (1049 of 1050)"},
		{"a malformed one sent", map[outcome.Outcome]int{outcome.Sent: 1051, outcome.Invalid: 11}, 1050, 12, "malformed message was INVALID (11 of 12)"},
		{"an unexpected invalid", map[outcome.Outcome]int{outcome.Sent: 1049, outcome.Invalid: 1}, 1050, 0, "INVALID 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := outcomeWarning(tt.outcomes, tt.valid, tt.malformed)
			if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("outcomeWarning = %q; want %q", got, tt.want)
			}
		})
	}
}
