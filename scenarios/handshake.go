package scenarios

import (
	"context"
	"fmt"
	"strings"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
)

// Toxiproxy names of the handshake toxic: its type in the lab's Toxiproxy
// server (vendormock/images/toxiproxy/server) and the name the bench gives
// it on the vendor proxy.
const (
	handshakeToxicType = "handshake"
	handshakeToxicName = "tcp_handshake"
)

// toxicProxy is the part of *toxiproxy.Proxy that setHandshake uses.
type toxicProxy interface {
	Toxics() (toxiproxy.Toxics, error)
	AddToxic(name, typeName, stream string, toxicity float32, attrs toxiproxy.Attributes) (*toxiproxy.Toxic, error)
	RemoveToxic(name string) error
}

var _ toxicProxy = (*toxiproxy.Proxy)(nil)

// setNetwork makes the vendor proxy add rttMS per round trip and, with
// TCP_HANDSHAKE=on, one more RTT before a new connection's first byte
// goes upstream. The handshake toxic goes first in the upstream chain (the
// latency toxics are removed and re-added after it), so the latency adds to
// the hold instead of overlapping it.
func (b *bench) setNetwork(ctx context.Context, rttMS int) error {
	if b.cfg.TCPHandshake != HandshakeOn {
		return b.stack.SetRTT(ctx, rttMS)
	}
	if err := b.stack.SetRTT(ctx, 0); err != nil {
		return err
	}
	if err := setHandshake(b.stack.Proxy(), rttMS); err != nil {
		return err
	}
	return b.stack.SetRTT(ctx, rttMS)
}

// setHandshake replaces the handshake toxic of p with one holding a new
// connection's first upstream byte until rttMS after accept. Errors: the
// Toxiproxy API failing, or a server without the handshake toxic (stock
// Toxiproxy: build the lab's image with vendormock/images/ensure-images.sh).
func setHandshake(p toxicProxy, rttMS int) error {
	existing, err := p.Toxics()
	if err != nil {
		return fmt.Errorf("set handshake: list toxics: %w", err)
	}
	for _, t := range existing {
		if t.Name == handshakeToxicName {
			if err := p.RemoveToxic(t.Name); err != nil {
				return fmt.Errorf("set handshake: remove %s: %w", t.Name, err)
			}
		}
	}
	if _, err := p.AddToxic(handshakeToxicName, handshakeToxicType, "upstream", 1.0, toxiproxy.Attributes{"rtt_ms": rttMS}); err != nil {
		if strings.Contains(err.Error(), "Bad toxic type") || strings.Contains(err.Error(), "invalid toxic type") {
			return fmt.Errorf("set handshake: this Toxiproxy server has no %q toxic (TCP_HANDSHAKE=on needs the lab's own Toxiproxy image): %w", handshakeToxicType, err)
		}
		return fmt.Errorf("set handshake: add %s: %w", handshakeToxicName, err)
	}
	return nil
}

// selfCheck measures the network setNetwork made before a run produces
// numbers: a round trip on an established connection (>= RTT) and a new
// connection's time to first response byte (>= 2 RTT with TCP_HANDSHAKE=on,
// >= 1 RTT otherwise). Errors wrap ErrSelfCheck and the stack's
// vendormock.ErrRTTNotApplied or vendormock.ErrHandshakeNotApplied.
func (b *bench) selfCheck(ctx context.Context, rttMS int) (established, newConn time.Duration, err error) {
	established, err = b.stack.SelfCheck(ctx, rttMS)
	if err != nil {
		return 0, 0, fmt.Errorf("%w: %w", ErrSelfCheck, err)
	}
	newConn, err = b.stack.SelfCheckNewConn(ctx, rttMS, b.cfg.TCPHandshake == HandshakeOn)
	if err != nil {
		return 0, 0, fmt.Errorf("%w: %w", ErrSelfCheck, err)
	}
	return established, newConn, nil
}
