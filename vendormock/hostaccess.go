package vendormock

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/moby/moby/api/types/container"
	mobynetwork "github.com/moby/moby/api/types/network"
)

// PublishOnLoopback returns a testcontainers host config modifier that
// runs next (when not nil), then binds each of ports ("443/tcp", as in
// ContainerRequest.ExposedPorts; a malformed one is left to testcontainers
// to reject) to 127.0.0.1 on an ephemeral host port: nothing of the lab
// listens beyond loopback. testcontainers-go from v0.45 no longer accepts
// the "127.0.0.1::443/tcp" form in ExposedPorts.
func PublishOnLoopback(ports []string, next func(*container.HostConfig)) func(*container.HostConfig) {
	loopback := netip.AddrFrom4([4]byte{127, 0, 0, 1})
	return func(hc *container.HostConfig) {
		if next != nil {
			next(hc)
		}
		if hc.PortBindings == nil {
			hc.PortBindings = mobynetwork.PortMap{}
		}
		for _, spec := range ports {
			if p, err := mobynetwork.ParsePort(spec); err == nil {
				hc.PortBindings[p] = []mobynetwork.PortBinding{{HostIP: loopback, HostPort: "0"}}
			}
		}
	}
}

// HostTLSConfig returns a TLS client config for the vendor from the host:
// the run's CA only, ServerName VendorHost, TLS 1.2 at least, and the
// worker's client certificate under SchemeMTLS (when it cannot be loaded,
// none: nginx then answers 421). Verification is never skipped.
func (s *Stack) HostTLSConfig() *tls.Config {
	c := &tls.Config{RootCAs: s.CAPool, ServerName: s.VendorHost, MinVersion: tls.VersionTLS12}
	if s.ClientCertFile != "" {
		if pair, err := tls.LoadX509KeyPair(s.ClientCertFile, s.ClientKeyFile); err == nil {
			c.Certificates = []tls.Certificate{pair}
		}
	}
	return c
}

// HostClient returns an HTTP client for the host that reaches the vendor
// through Toxiproxy's published port whatever URL host it is given (use
// VendorURL), verifies against the run's CA, and keeps connections alive.
// For tests and diagnostics; the worker under test has its own client.
func (s *Stack) HostClient() *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second}
	return &http.Client{
		Timeout: s.Profile.Client.ResponseTimeout,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return d.DialContext(ctx, network, s.VendorAddrHost)
			},
			TLSClientConfig:   s.HostTLSConfig(),
			ForceAttemptHTTP2: false,
			MaxIdleConns:      1,
			IdleConnTimeout:   s.KeepaliveTimeout / 2,
		},
	}
}
