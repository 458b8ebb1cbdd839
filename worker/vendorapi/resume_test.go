package vendorapi

import (
	"context"
	"crypto/tls"
	"fmt"
	"testing"
)

// TestPerRequestResumeResumes: with the shared session cache, every
// connection after the token call's resumes the session the vendor issued
// (the server's tls.ConnectionState.DidResume, and the client's trace),
// still one new connection per call, for TLS 1.2 (session tickets) and
// TLS 1.3 (PSK). The negative control is the same run with the plain
// per-request strategy: not one handshake resumed.
func TestPerRequestResumeResumes(t *testing.T) {
	const sends = 4
	for _, ver := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		for _, tc := range []struct {
			name       string
			strategy   func(Config) *PerRequest
			wantResume bool
		}{
			{PerRequestResumeName, NewPerRequestResume, true},
			{PerRequestName + " (control)", NewPerRequest, false},
		} {
			t.Run(tls.VersionName(ver)+"/"+tc.name, func(t *testing.T) {
				v := startVendor(t, withServerTLS(ver, ver))
				d := &dialer{route: to(v.addr())}
				cfg := baseConfig(t, d)
				cfg.MaxTLSVersion = ver
				s := tc.strategy(cfg)
				c := NewClient("https://"+vendorHost, testCreds, s)
				defer c.Close()
				for i := range sends {
					res, err := c.Send(context.Background(), note(fmt.Sprintf("ref-%d", i)))
					if err != nil {
						t.Fatalf("send %d: %v", i, err)
					}
					if res.Trace.Reused || res.Trace.TLSHandshakeMS <= 0 {
						t.Errorf("send %d: trace %+v: want a new connection with a handshake", i, res.Trace)
					}
					if res.Trace.TLSResumed != tc.wantResume {
						t.Errorf("send %d: client trace says resumed %v, want %v", i, res.Trace.TLSResumed, tc.wantResume)
					}
				}
				if got := v.connsNew.Load(); got != sends+1 {
					t.Errorf("server accepted %d connections, want %d (token + one per send)", got, sends+1)
				}
				v.mu.Lock()
				defer v.mu.Unlock()
				if len(v.resumed) != sends+1 {
					t.Fatalf("server saw %d TLS requests, want %d", len(v.resumed), sends+1)
				}
				if v.resumed[0] {
					t.Error("the token call's connection resumed: the cache started empty, it cannot")
				}
				for i, r := range v.resumed[1:] {
					if r != tc.wantResume {
						t.Errorf("request %d: server says resumed %v, want %v", i+1, r, tc.wantResume)
					}
					if v.tlsVers[i+1] != ver {
						t.Errorf("request %d negotiated %s, want %s", i+1, tls.VersionName(v.tlsVers[i+1]), tls.VersionName(ver))
					}
				}
			})
		}
	}
}

// TestPerRequestResumeName: the strategy names itself as the MODES value
// and Strategies builds it.
func TestPerRequestResumeName(t *testing.T) {
	s := Strategies()[PerRequestResumeName](Config{})
	defer s.Close()
	if s.Name() != PerRequestResumeName {
		t.Errorf("Name() = %q, want %q", s.Name(), PerRequestResumeName)
	}
	if NewPerRequest(Config{}).Name() != PerRequestName {
		t.Error("the plain per-request strategy lost its name")
	}
}
