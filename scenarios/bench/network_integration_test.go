//go:build integration

package bench

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/testlog"
	"github.com/notifier-lab/notifier-lab/scenarios/netmodel"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// TestSelfCheckRefusesMissingHandshake starts the vendor stack with the
// lab's Toxiproxy server, sets 50 ms RTT with TCP_HANDSHAKE=on and checks
// that the self-check passes (a new connection's first response byte after
// >= 2 RTT); then it removes the handshake toxic and expects the refusal
// that stops a run before it produces numbers.
func TestSelfCheckRefusesMissingHandshake(t *testing.T) {
	vendormock.EnsureTestcontainersEnv()
	images, err := vendormock.ImagesFromEnv()
	if err != nil {
		t.Fatalf("lab images: %v\nBuild them and load their names first: vendormock/images/ensure-images.sh && set -a && . .lab/images.env && set +a (./run.sh test does both)", err)
	}
	profile, err := ResolveProfile(DefaultProfile)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	stack := startTestStack(ctx, t, vendormock.Options{ProfileDir: profile, ServerDelayMS: 0, Images: images,
		WorkDir: filepath.Join(t.TempDir(), "stack"), Log: testlog.New(t)})
	const rtt = 50
	cfg := DefaultConfig()
	cfg.TCPHandshake = netmodel.HandshakeOn
	b := NewBench(PointOptions{Config: cfg, Log: testlog.New(t), Stack: stack})
	if err := b.setNetwork(ctx, rtt); err != nil {
		t.Fatalf("setNetwork(%d ms, handshake on): %v", rtt, err)
	}
	est, fresh, err := b.selfCheck(ctx, rtt)
	if err != nil {
		t.Fatalf("self-check with the handshake toxic in force: %v", err)
	}
	t.Logf("handshake on: established round trip %s, new connection's first byte %s", est, fresh)
	if fresh < 2*rtt*time.Millisecond {
		t.Errorf("new connection's first byte after %s, want >= %d ms", fresh, 2*rtt)
	}

	if err := stack.Proxy().RemoveToxic(vendormock.ToxicHandshake); err != nil {
		t.Fatalf("remove the handshake toxic: %v", err)
	}
	_, fresh, err = b.selfCheck(ctx, rtt)
	if !errors.Is(err, ErrSelfCheck) || !errors.Is(err, vendormock.ErrHandshakeNotApplied) {
		t.Fatalf("self-check without the handshake toxic: err %v (first byte %s); want ErrSelfCheck wrapping ErrHandshakeNotApplied", err, fresh)
	}
	t.Logf("handshake toxic removed: refused as expected: %v", err)

	// Negative control of the refusal's cause: the same stack with
	// TCP_HANDSHAKE=off asks only 1 RTT and passes.
	b.cfg.TCPHandshake = netmodel.HandshakeOff
	if _, _, err := b.selfCheck(ctx, rtt); err != nil {
		t.Errorf("self-check with TCP_HANDSHAKE=off on the stock path: %v", err)
	}
}
