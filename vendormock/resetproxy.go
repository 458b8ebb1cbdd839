package vendormock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// AliasStreamReset is the stream-reset proxy's alias on the run's network.
const AliasStreamReset = "streamreset"

// ErrNoStreamResetImage is returned by StartStreamReset without an image
// (LAB_IMAGE_STREAMRESET, built by vendormock/images/ensure-images.sh).
var ErrNoStreamResetImage = errors.New("no stream-reset proxy image: set " + EnvImageStreamReset + " (vendormock/images/ensure-images.sh builds it)")

// StreamResetOptions configure StartStreamReset.
type StreamResetOptions struct {
	// Image is the proxy's image (Images.StreamReset).
	Image string
	// Every resets every Every-th POST on the profile's send path whose
	// upstream answer is a 2xx (>= 1).
	Every int
	// H1 applies the rule to HTTP/1.1 too: the counted POST's connection
	// is closed with a TCP reset and no answer (streamreset -reset-h1;
	// the audit's POST replay probe). Off: HTTP/1.1 is only forwarded.
	H1 bool
	// HTTP1Only makes the proxy offer only http/1.1 by ALPN (streamreset
	// -alpn http/1.1): a client that speaks HTTP/2 then uses HTTP/1.1
	// (the replay probe's vendor-forced HTTP/1.1 lane). Off: h2 and
	// http/1.1, h2 preferred.
	HTTP1Only bool
}

// StartStreamReset puts the lab's stream-reset proxy (vendormock/streamreset)
// into the vendor path: worker -> Toxiproxy (ProxyName, toxics kept) ->
// streamreset -> nginx -> WireMock. The proxy terminates TLS with the run's
// server certificate (ALPN h2, http/1.1 for probes), forwards every request
// to nginx over HTTPS/1.1 verified against the run's CA (with the worker's
// client certificate under SchemeMTLS), and answers the upstream's answer,
// except every o.Every-th send POST accepted by WireMock: that stream gets
// RST_STREAM(PROTOCOL_ERROR) instead, so the vendor has the message and the
// client cannot know (docs/outcomes.md#automatic-replays). nginx cannot
// produce this reset; see vendormock/streamreset's package doc.
//
// Stop the returned proxy when the scenario ends, whatever happened: it
// routes the vendor proxy back to nginx and removes the container. Errors:
// ErrNoStreamResetImage, Every < 1, a TLS-less scheme (HTTP/2 needs TLS),
// the container not ready (ErrNotReady), the Toxiproxy API failing.
func (s *Stack) StartStreamReset(ctx context.Context, o StreamResetOptions) (*StreamReset, error) {
	if o.Image == "" {
		return nil, ErrNoStreamResetImage
	}
	if o.Every < 1 {
		return nil, fmt.Errorf("stream reset: every %d: want >= 1", o.Every)
	}
	if !s.Scheme.TLS() {
		return nil, fmt.Errorf("stream reset: scheme %s: HTTP/2 needs TLS", s.Scheme)
	}
	args := []string{"-listen", ":443", "-cert", nginxLabDir + "/" + CertFileName, "-key", nginxLabDir + "/" + ServerKeyFile,
		"-upstream", AliasNginx + ":443", "-upstream-ca", nginxLabDir + "/" + CAFileName, "-upstream-server-name", s.VendorHost,
		"-reset-path", s.Profile.API.SendPath, "-reset-every", strconv.Itoa(o.Every),
		"-log-header", s.Profile.Client.CorrelationHeader}
	if o.H1 {
		args = append(args, "-reset-h1")
	}
	if o.HTTP1Only {
		args = append(args, "-alpn", "http/1.1")
	}
	binds := []string{filepath.Join(s.WorkDir, "tls") + ":" + nginxLabDir + ":ro"}
	if s.ClientCertFile != "" {
		binds = append(binds, s.ClientCertFile+":/lab-client/"+ClientCertFileName+":ro", s.ClientKeyFile+":/lab-client/"+ClientKeyFileName+":ro")
		args = append(args, "-client-cert", "/lab-client/"+ClientCertFileName, "-client-key", "/lab-client/"+ClientKeyFileName)
	}
	const name = "streamreset"
	c, err := s.run(ctx, name, []string{AliasStreamReset}, testcontainers.ContainerRequest{
		Image: o.Image,
		Cmd:   args,
		HostConfigModifier: func(hc *container.HostConfig) {
			hc.Binds = append(hc.Binds, binds...)
		},
		WaitingFor: wait.ForLog("listening on").WithStartupTimeout(DefaultReadyTimeout),
	})
	remove := func(ctx context.Context) error {
		s.mu.Lock()
		delete(s.containers, name)
		s.mu.Unlock()
		if c == nil || isNilContainer(c) {
			return nil
		}
		return testcontainers.TerminateContainer(c, testcontainers.StopContext(ctx), testcontainers.StopTimeout(5*time.Second))
	}
	if err != nil {
		return nil, errors.Join(err, remove(context.WithoutCancel(ctx)))
	}
	if err := s.routeVendor(AliasStreamReset + ":443"); err != nil {
		return nil, errors.Join(err, remove(context.WithoutCancel(ctx)))
	}
	s.logf("stream reset: vendor path through %s (every %d sends reset with PROTOCOL_ERROR)", AliasStreamReset, o.Every)
	return &StreamReset{c: c, stop: func(ctx context.Context) error {
		err := s.routeVendor(AliasNginx + ":443")
		if err == nil {
			s.logf("stream reset: vendor path back to %s", AliasNginx)
		}
		return errors.Join(err, remove(ctx))
	}}, nil
}

// routeVendor points the vendor proxy at upstream ("host:port"). Toxiproxy
// restarts the proxy's listener (open connections are closed) and keeps its
// toxics.
func (s *Stack) routeVendor(upstream string) error {
	if s.proxy.Upstream == upstream {
		return nil
	}
	prev := s.proxy.Upstream
	s.proxy.Upstream = upstream
	if err := s.proxy.Save(); err != nil {
		s.proxy.Upstream = prev
		return fmt.Errorf("route the vendor proxy to %s: %w", upstream, err)
	}
	return nil
}

// StreamReset is a running stream-reset proxy (StartStreamReset).
type StreamReset struct {
	c       testcontainers.Container
	stop    func(context.Context) error
	once    sync.Once
	stopErr error
}

// Stop routes the vendor proxy back to nginx and removes the container;
// a second call returns the first one's error.
func (r *StreamReset) Stop(ctx context.Context) error {
	r.once.Do(func() { r.stopErr = r.stop(ctx) })
	return r.stopErr
}

// Logs returns the proxy's output so far: one "reset ..." line per stream
// it reset, naming the send's correlation header.
func (r *StreamReset) Logs(ctx context.Context) (string, error) {
	rc, err := r.c.Logs(ctx)
	if err != nil {
		return "", fmt.Errorf("logs of the stream-reset proxy: %w", err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	return string(b), err
}
