// The page site's network: the RTT on both proxies, the probe that checks
// it, and the namespace Chromium enters.

package pagesite

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
	tcexec "github.com/testcontainers/testcontainers-go/exec"

	"github.com/notifier-lab/notifier-lab/vendormock"
)

// toxicHandshake is the handshake toxic's name on both proxies (the
// latency toxics are vendormock's ToxicLatencyDown and ToxicLatencyUp).
const toxicHandshake = vendormock.ToxicHandshake

// SetRTT makes a round trip through either proxy cost rttMS: latency
// rttMS/2 downstream and the rest upstream (vendormock.SplitRTT, whole ms),
// and the lab's handshake toxic (vendormock.HandshakeToxicType), so a new
// connection's first byte waits one RTT more, as the TCP handshake does
// on a real link. 0 removes them. Connections opened later get them.
// Errors: rttMS < 0, Toxiproxy's API.
func (s *Site) SetRTT(rttMS int) error {
	if rttMS < 0 {
		return fmt.Errorf("set rtt: negative rtt %d ms", rttMS)
	}
	down, up := vendormock.SplitRTT(rttMS)
	for port, p := range s.proxies {
		existing, err := p.Toxics()
		if err != nil {
			return fmt.Errorf("set rtt: list toxics of :%d: %w", port, err)
		}
		for _, t := range existing {
			if err := p.RemoveToxic(t.Name); err != nil {
				return fmt.Errorf("set rtt: remove %s: %w", t.Name, err)
			}
		}
		if rttMS == 0 {
			continue
		}
		if _, err := p.AddToxic(toxicHandshake, vendormock.HandshakeToxicType, "upstream", 1.0,
			toxiproxy.Attributes{"rtt_ms": rttMS}); err != nil {
			return fmt.Errorf("set rtt: add %s (needs the lab's Toxiproxy image: rerun vendormock/images/ensure-images.sh): %w", toxicHandshake, err)
		}
		if err := vendormock.AddLatencyToxics(p, rttMS); err != nil {
			return fmt.Errorf("set rtt: %w", err)
		}
	}
	s.logf("rtt %d ms on both proxies: latency %d ms downstream + %d ms upstream, tcp handshake 1 rtt", rttMS, down, up)
	return nil
}

// NginxVersion runs `nginx -v` in the nginx container and returns what it
// printed, e.g. "nginx/1.22.1". Errors: Docker's, an unexpected answer.
func (s *Site) NginxVersion(ctx context.Context) (string, error) {
	s.mu.Lock()
	c := s.cs["nginx"]
	s.mu.Unlock()
	if c == nil {
		return "", errors.New("nginx version: nginx not started")
	}
	code, r, err := c.Exec(ctx, []string{"nginx", "-v"}, tcexec.Multiplexed())
	if err != nil {
		return "", fmt.Errorf("nginx version: %w", err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		return "", fmt.Errorf("nginx version: %w", err)
	}
	_, v, ok := strings.Cut(strings.TrimSpace(string(out)), "nginx version: ")
	if code != 0 || !ok {
		return "", fmt.Errorf("nginx version: exit %d, %q", code, out)
	}
	return v, nil
}

// InsideAddr is Toxiproxy's listener for port (PortH1, PortH2) as seen
// from inside Toxiproxy's network namespace (NetNS): 127.0.0.1:port.
func InsideAddr(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// NetNS returns the path of the Toxiproxy container's network namespace,
// /proc/<pid>/ns/net. A process entered into it (nsenter --net=PATH)
// reaches the proxies at InsideAddr without Docker's port proxy, and sees
// none of the host's interfaces come and go: Chromium aborts requests in
// flight with ERR_NETWORK_CHANGED whenever an address changes on any
// interface, which every Docker network another run creates does.
// Errors: Docker's, a container without a process.
func (s *Site) NetNS(ctx context.Context) (string, error) {
	if s.toxiC == nil {
		return "", errors.New("network namespace: toxiproxy not started")
	}
	st, err := s.toxiC.State(ctx)
	if err != nil {
		return "", fmt.Errorf("network namespace: %w", err)
	}
	if st.Pid <= 0 {
		return "", errors.New("network namespace: toxiproxy has no process")
	}
	return fmt.Sprintf("/proc/%d/ns/net", st.Pid), nil
}

// ProbeRTT opens a TLS connection to addr (H1Addr or H2Addr, HTTP/1.1),
// sends one probe and returns the round trip of a second one on the same
// connection: one RTT through Toxiproxy and nginx, no handshake.
func (s *Site) ProbeRTT(ctx context.Context, addr string) (time.Duration, error) {
	d := &tls.Dialer{Config: s.TLSConfig()}
	d.Config.NextProtos = []string{"http/1.1"}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return 0, fmt.Errorf("probe %s: %w", addr, err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	tr := &http.Transport{DialTLSContext: func(context.Context, string, string) (net.Conn, error) { return conn, nil }}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr}
	var rt time.Duration
	for range 2 {
		t0 := time.Now()
		resp, err := cl.Get("https://" + s.Host + probePath)
		if err != nil {
			return 0, fmt.Errorf("probe %s: %w", addr, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			return 0, fmt.Errorf("probe %s: status %d, want 204", addr, resp.StatusCode)
		}
		rt = time.Since(t0)
	}
	return rt, nil
}
