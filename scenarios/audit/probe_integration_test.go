//go:build integration

package audit

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker"
)

// testLog sends each line written to it to t.Log.
type testLog struct {
	t   *testing.T
	buf *bytes.Buffer
}

func (w testLog) Write(b []byte) (int, error) {
	w.buf.Write(b)
	for {
		line, err := w.buf.ReadString('\n')
		if err != nil {
			w.buf.Reset()
			w.buf.WriteString(line)
			return len(b), nil
		}
		w.t.Log(strings.TrimRight(line, "\n"))
	}
}

// TestIntegrationProbes runs the probes against planted Go workers on one
// stack (alimtalk, keep-alive 75 s), about 2.5 minutes:
//   - idle: a worker whose idle timeout is 3 s, on the ladder 1, 2, 4 s:
//     measured between 2 and about 4 s, one gap step around it;
//   - replay: a worker with the transport's own replays switched back on
//     (UNSAFE_ALLOW_TRANSPORT_REPLAY) is caught sending a reset HTTP/2 POST
//     again, with no catalog fault involved; the same worker without it
//     sends nothing twice on either protocol (the control);
//   - response: the Go worker gives up (nginx 499) before a vendor that
//     holds the send 15 s, at about its response timeout.
func TestIntegrationProbes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	st, images, target := probeStack(ctx, t)

	t.Run("idle", func(t *testing.T) {
		const planted = 3 * time.Second
		tg := target(func(c *worker.Config) { c.IdleConnTimeout = planted })
		m, err := ProbeIdle(ctx, tg, "it", IdleGaps(st.KeepaliveTimeout, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("measured %s", m.Measured())
		if m.Unknown != "" || !m.Reuse || m.NewFromS == nil {
			t.Fatalf("planted %s: %s: want a bracket", planted, m.Measured())
		}
		if !(m.ReusedUpToS < planted.Seconds() && planted.Seconds() <= *m.NewFromS && *m.NewFromS < 5) {
			t.Errorf("planted %s not within one gap step: (%v, %v]", planted, m.ReusedUpToS, *m.NewFromS)
		}
		// The same lines' facts: the Go worker over TLS 1.3, ALPN
		// http/1.1 logged by nginx.
		if f := m.Facts; f == nil || !f.Logged || f.TLS["TLSv1.3"] != f.Sends || f.ALPN["http/1.1"] != f.Sends {
			t.Errorf("facts %+v: want every send TLS 1.3 with ALPN http/1.1", m.Facts)
		} else {
			t.Logf("facts: %s", f)
		}
	})

	t.Run("replay", func(t *testing.T) {
		m, err := ProbeReplay(ctx, target(func(c *worker.Config) { c.UnsafeAllowTransportReplay = true }), "itr", images.StreamReset, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range m.Lanes {
			t.Logf("replaying client: %s", l.Measured())
		}
		if len(m.Lanes) != 2 || m.Lanes[1].Unknown != "" || len(m.Lanes[1].Replayed) == 0 {
			t.Errorf("the planted replaying client (HTTP/2) was not caught: %+v", m.Lanes)
		}
		ctl, err := ProbeReplay(ctx, target(nil), "itc", images.StreamReset, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range ctl.Lanes {
			t.Logf("control: %s", l.Measured())
			if l.Unknown != "" || len(l.Replayed) > 0 || l.Resets[laneProto(l.Lane)] == 0 {
				t.Errorf("control lane %s: want resets over its protocol and nothing sent again: %s", l.Lane, l.Measured())
			}
		}
	})

	t.Run("response", func(t *testing.T) {
		m, err := ProbeResponse(ctx, target(nil), "itt", 15*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("measured %s", m.Measured())
		if m.Status != 499 || m.WaitedS <= 0 || m.WaitedS >= 15 {
			t.Errorf("Go worker against a 15 s vendor: %s: want nginx 499 before 15 s", m.Measured())
		}
	})
}

func laneProto(lane string) string {
	if strings.HasPrefix(lane, "HTTP/2") {
		return "HTTP/2"
	}
	return "HTTP/1.1"
}

// probeStack starts an alimtalk stack for a probe test (closed at the
// test's end) and returns it, the lab's images and a function giving a
// LabTarget on the Go worker with a plant (nil = none).
func probeStack(ctx context.Context, t *testing.T) (*vendormock.Stack, vendormock.Images, func(plant func(*worker.Config)) ProbeTarget) {
	t.Helper()
	images, err := vendormock.ImagesFromEnv()
	if err != nil || images.Worker == "" || images.StreamReset == "" {
		t.Fatalf("lab images (worker %q, streamreset %q): %v: run vendormock/images/ensure-images.sh and load .lab/images.env", images.Worker, images.StreamReset, err)
	}
	log := testLog{t: t, buf: new(bytes.Buffer)}
	st, err := vendormock.Start(ctx, vendormock.Options{
		ProfileDir: filepath.Join("..", "..", vendormock.DefaultProfileDir), ServerDelayMS: -1,
		Images: images, Session: os.Getenv(vendormock.EnvSession), WorkDir: t.TempDir(), Log: log,
	})
	if err != nil {
		t.Fatalf("start stack: %v", err)
	}
	t.Cleanup(func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer ccancel()
		if err := st.Close(cctx); err != nil {
			t.Errorf("close stack: %v", err)
		}
	})
	sel, err := vendormock.WorkerImage(vendormock.WorkerGo, images.Var)
	if err != nil {
		t.Fatal(err)
	}
	return st, images, func(plant func(*worker.Config)) ProbeTarget {
		tg, closeT, err := LabTarget(st, sel, st.KeepaliveTimeout, t.TempDir(), plant, log)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { closeT() })
		return tg
	}
}
