// The four services of the stack, each started and waited for on the
// run's network: RabbitMQ, WireMock, nginx and Toxiproxy.

package vendormock

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
	"github.com/moby/moby/api/types/container"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
	"github.com/wiremock/go-wiremock"
)

// isNilContainer reports a typed nil inside the interface.
func isNilContainer(c testcontainers.Container) bool {
	dc, ok := c.(*testcontainers.DockerContainer)
	return ok && dc == nil
}

func (s *Stack) startRabbitMQ(ctx context.Context, image string, t0 time.Time) error {
	c, err := s.run(ctx, "rabbitmq", []string{AliasRabbitMQ}, testcontainers.ContainerRequest{
		Image:        image,
		ExposedPorts: []string{"5672/tcp"},
		// guest may log in from other hosts than loopback (the host through
		// the published port, the worker container): the official image
		// allows it by configuration, this makes the offline image do so too.
		Env: map[string]string{"RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS": "-rabbit loopback_users []"},
		// Each strategy has its own 60 s default under ForAll's deadline:
		// give the log wait the whole budget (a loaded machine boots the
		// Erlang VM slowly).
		WaitingFor: wait.ForAll(
			wait.ForLog("Server startup complete").WithStartupTimeout(DefaultReadyTimeout),
			wait.ForListeningPort("5672/tcp").SkipInternalCheck(),
		).WithDeadline(DefaultReadyTimeout),
	})
	if err != nil {
		return err
	}
	addr, err := hostAddr(ctx, c, "5672/tcp")
	if err != nil {
		return fmt.Errorf("rabbitmq: %w", err)
	}
	s.AMQPURL = "amqp://guest:guest@" + addr + "/"
	s.AMQPURLNetwork = "amqp://guest:guest@" + AliasRabbitMQ + ":5672/"
	s.AMQPURLsNetwork = s.AMQPURLNetwork
	s.mu.Lock()
	s.brokers = []BrokerNode{{Alias: AliasRabbitMQ, Name: "rabbit@" + c.GetContainerID()[:12], key: "rabbitmq",
		AMQPURL: s.AMQPURL, AMQPURLNetwork: s.AMQPURLNetwork}}
	s.mu.Unlock()
	s.markReady("rabbitmq", t0)
	return nil
}

// WireMockArgs are the WireMock options the lab starts it with. gzip is
// off: compressing a 100-byte JSON answer costs WireMock and the worker CPU
// for nothing, and the lab measures the client, not compression.
//
// --container-threads: a stub's fixed delay (the vendor's think time)
// holds one Jetty thread for its whole length, and WireMock's default pool
// is 25 threads (Options.DEFAULT_CONTAINER_THREADS), some of them Jetty's
// acceptors and selectors. With 150 ms of think time that capped every
// sender at ~127 sends/s, however many were in flight (the scale
// benchmark's first run: direct and worker alike, with the machine half
// idle; docs/running.md#the-scale-benchmark). WireMockThreads is above the
// most sends the scale grid puts in flight (4 workers x 128), so the
// think time, not the mock's pool, bounds a sender; Jetty starts threads
// on demand, so an idle pool costs nothing.
var WireMockArgs = []string{"--port", "8080", "--disable-banner", "--disable-gzip",
	"--container-threads", strconv.Itoa(WireMockThreads)}

// wireMockArgs is WireMockArgs with --no-request-journal when the stack
// keeps none (Options.NoRequestJournal).
func (s *Stack) wireMockArgs() []string {
	if s.NoRequestJournal {
		return append(slices.Clone(WireMockArgs), "--no-request-journal")
	}
	return WireMockArgs
}

// WireMockThreads is the size of WireMock's request thread pool
// (--container-threads).
const WireMockThreads = 600

// WireMockJavaOpts tune the JVM for a short run on a 2-core machine: the
// C1 compiler only (a run of ~1,000 requests never reaches C2's thresholds,
// while C2's background compiles steal CPU from it) and the serial GC.
// Measured here, together with --disable-gzip: p50 of the templated 18 ms
// send stub from the host 20.85 ms -> 20.05 ms.
const WireMockJavaOpts = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"

func (s *Stack) startWireMock(ctx context.Context, image string, t0 time.Time) error {
	c, err := s.run(ctx, "wiremock", []string{AliasWireMock}, testcontainers.ContainerRequest{
		Image:        image,
		Cmd:          s.wireMockArgs(),
		Env:          map[string]string{"JAVA_OPTS": WireMockJavaOpts},
		ExposedPorts: []string{"8080/tcp"},
		WaitingFor: wait.ForHTTP("/__admin/health").WithPort("8080/tcp").
			WithStatusCodeMatcher(func(code int) bool { return code == http.StatusOK }).
			WithPollInterval(200 * time.Millisecond).
			WithStartupTimeout(DefaultReadyTimeout),
	})
	if err != nil {
		return err
	}
	addr, err := hostAddr(ctx, c, "8080/tcp")
	if err != nil {
		return fmt.Errorf("wiremock: %w", err)
	}
	s.WireMockURL = "http://" + addr
	s.wm = wiremock.NewClient(s.WireMockURL)
	s.markReady("wiremock", t0)
	return nil
}

func (s *Stack) startNginx(ctx context.Context, image string, t0 time.Time) error {
	probe := wait.ForHTTP(ProbePath).WithPort("443/tcp")
	if s.Scheme.TLS() {
		probe = probe.WithTLS(true, s.HostTLSConfig())
	}
	c, err := s.run(ctx, "nginx", []string{AliasNginx}, testcontainers.ContainerRequest{
		Image:        image,
		ExposedPorts: []string{"443/tcp"},
		HostConfigModifier: func(hc *container.HostConfig) {
			hc.Binds = append(hc.Binds,
				filepath.Join(s.WorkDir, "nginx", "nginx.conf")+":"+nginxConfPath+":ro",
				filepath.Join(s.WorkDir, "tls")+":"+nginxLabDir+":ro",
				filepath.Join(s.WorkDir, "log")+":"+nginxLogDir,
			)
		},
		// A real request (over TLS verified against the run's CA, with the
		// client certificate under mtls), answered by nginx itself: the
		// listener, the certificates and the config work.
		WaitingFor: probe.
			WithStatusCodeMatcher(func(code int) bool { return code == http.StatusNoContent }).
			WithPollInterval(100 * time.Millisecond).
			WithStartupTimeout(DefaultReadyTimeout),
	})
	if err != nil {
		return err
	}
	if s.NginxAddrHost, err = hostAddr(ctx, c, "443/tcp"); err != nil {
		return fmt.Errorf("nginx: %w", err)
	}
	s.markReady("nginx", t0)
	return nil
}

func (s *Stack) startToxiproxy(ctx context.Context, image string, t0 time.Time) error {
	c, err := s.run(ctx, "toxiproxy", []string{AliasToxiproxy, s.VendorHost}, testcontainers.ContainerRequest{
		Image:        image,
		Cmd:          []string{"-host", "0.0.0.0", "-port", "8474"},
		ExposedPorts: []string{"8474/tcp", "443/tcp", strconv.Itoa(ReportsProxyPort) + "/tcp"},
		WaitingFor: wait.ForHTTP("/version").WithPort("8474/tcp").
			WithPollInterval(100 * time.Millisecond).
			WithStartupTimeout(DefaultReadyTimeout),
	})
	if err != nil {
		return err
	}
	api, err := hostAddr(ctx, c, "8474/tcp")
	if err != nil {
		return fmt.Errorf("toxiproxy: %w", err)
	}
	if s.VendorAddrHost, err = hostAddr(ctx, c, "443/tcp"); err != nil {
		return fmt.Errorf("toxiproxy: %w", err)
	}
	if s.ReportsAddrHost, err = hostAddr(ctx, c, strconv.Itoa(ReportsProxyPort)+"/tcp"); err != nil {
		return fmt.Errorf("toxiproxy: %w", err)
	}
	s.ToxiproxyURL = "http://" + api
	s.toxi = toxiproxy.NewClient(s.ToxiproxyURL)
	// The upstream is resolved per client connection, so nginx need not be
	// up yet.
	if s.proxy, err = s.toxi.CreateProxy(ProxyName, "0.0.0.0:443", AliasNginx+":443"); err != nil {
		return fmt.Errorf("toxiproxy: create proxy %s: %w", ProxyName, err)
	}
	s.markReady("toxiproxy", t0)
	return nil
}

// waitVendorPath probes ProbePath through Toxiproxy until it answers: the
// whole host -> Toxiproxy -> nginx path works.
func (s *Stack) waitVendorPath(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, DefaultReadyTimeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		_, err := s.probeOnce(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("vendor path through toxiproxy: %w: %v", ErrNotReady, err)
		case <-tick.C:
		}
	}
}

// hostAddr returns "127.0.0.1:PORT" of a published container port.
func hostAddr(ctx context.Context, c testcontainers.Container, port string) (string, error) {
	host, err := c.Host(ctx)
	if err != nil {
		return "", fmt.Errorf("host of %s: %w", port, err)
	}
	mp, err := c.MappedPort(ctx, port)
	if err != nil {
		return "", fmt.Errorf("mapped port of %s: %w", port, err)
	}
	return net.JoinHostPort(host, mp.Port()), nil
}
