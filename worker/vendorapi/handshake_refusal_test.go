package vendorapi

import (
	"context"
	"crypto/tls"
	"errors"
	"testing"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// TestSendRefusedInHandshakeNamesTheCause: the token call succeeds on a
// server without client authentication, and the send's new connection
// goes to one that requires a client certificate. Under TLS 1.2 the
// server refuses inside the handshake (no connection is obtained), under
// TLS 1.3 after the client's Finished; either way the send is NOT_SENT
// (tls) and wraps ErrHandshakeRefused, as the token call's refusal does.
func TestSendRefusedInHandshakeNamesTheCause(t *testing.T) {
	cp := newClientPKI(t)
	for _, ver := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		t.Run(tls.VersionName(ver), func(t *testing.T) {
			open := startVendor(t)
			strict := startVendor(t, withClientAuth(cp.pool), withServerTLS(ver, ver))
			c := newTestClient(t, PerRequestName, baseConfig(t, &dialer{route: firstThen(open.addr(), strict.addr())}))
			_, err := c.Send(context.Background(), note("ref-refused"))
			se := asSendError(t, err)
			if se.Op != OpSend || se.Class != outcome.NotSent || se.Reason != ReasonTLS || !errors.Is(err, ErrHandshakeRefused) {
				t.Errorf("Send: %v (op %s class %s reason %s); want a NOT_SENT (tls) send wrapping ErrHandshakeRefused", err, se.Op, se.Class, se.Reason)
			}
			if strict.messageCalls.Load() != 0 {
				t.Errorf("%d message calls reached the strict vendor, want 0", strict.messageCalls.Load())
			}
		})
	}
}
