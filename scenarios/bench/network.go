package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/netmodel"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// setNetwork makes the vendor proxy add rttMS per round trip and, with
// TCP_HANDSHAKE=on, the handshake toxic (vendormock.WithTCPHandshake): a new
// connection's first byte waits one RTT more, as the TCP handshake costs on
// a real network.
func (b *Bench) setNetwork(ctx context.Context, rttMS int) error {
	return b.stack.SetRTT(ctx, rttMS, vendormock.WithTCPHandshake(b.cfg.TCPHandshake == netmodel.HandshakeOn))
}

// selfCheck measures the network setNetwork made before a run produces
// numbers: a round trip on an established connection (>= RTT) and a new
// connection's time to first response byte (>= 2 RTT with TCP_HANDSHAKE=on,
// >= 1 RTT otherwise). Errors wrap ErrSelfCheck and the stack's
// vendormock.ErrRTTNotApplied or vendormock.ErrHandshakeNotApplied.
func (b *Bench) selfCheck(ctx context.Context, rttMS int) (established, newConn time.Duration, err error) {
	established, err = b.stack.SelfCheck(ctx, rttMS)
	if err != nil {
		return 0, 0, fmt.Errorf("%w: %w", ErrSelfCheck, err)
	}
	newConn, err = b.stack.SelfCheckNewConn(ctx, rttMS, b.cfg.TCPHandshake == netmodel.HandshakeOn)
	if err != nil {
		return 0, 0, fmt.Errorf("%w: %w", ErrSelfCheck, err)
	}
	return established, newConn, nil
}
