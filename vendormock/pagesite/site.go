package pagesite

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
	"github.com/moby/moby/api/types/container"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"
	"github.com/wiremock/go-wiremock"

	"github.com/notifier-lab/notifier-lab/vendormock"
)

// DefaultHost is the site's host name: the server certificate's only SAN,
// which the browser maps to 127.0.0.1 (.test is reserved, RFC 2606).
const DefaultHost = "page.lab.test"

// APIPath is the path WireMock answers after Options.APIDelayMS; a page
// asks for it as /run/<load id>/api/slow.
const APIPath = "/api/slow"

// Options configure Start.
type Options struct {
	// Images names the nginx, WireMock and Toxiproxy images
	// (vendormock.Images; the others are not used).
	Images vendormock.Images
	// Root is the host folder nginx serves under /run/<load id>/
	// (read-only); it must exist.
	Root string
	// WorkDir is the host folder for tls/, nginx/ and log/ (created).
	WorkDir string
	// Host is the certificate's name; "" = DefaultHost.
	Host string
	// APIDelayMS is WireMock's fixed delay on APIPath, ms (>= 0).
	APIDelayMS int
	// Session is vendormock.LabelSession's value ("" = none).
	Session string
	// Log gets progress lines; nil = discard.
	Log io.Writer
}

// Site is a running page site. Addresses marked host are 127.0.0.1 ports
// published on the host.
type Site struct {
	Host string
	// H1Addr and H2Addr are host: Toxiproxy's listeners in front of
	// nginx's HTTP/1.1-only and h2 server blocks.
	H1Addr, H2Addr string
	// CAFile is the host path of the run's CA certificate (PEM).
	CAFile string
	// CASPKIHash is base64(SHA-256(the CA's SubjectPublicKeyInfo)), the
	// form Chromium's --ignore-certificate-errors-spki-list takes (RFC
	// 7469 section 2.4): it accepts a chain holding that key, so only
	// certificates of this run's CA.
	CASPKIHash string
	// AccessLogPath is the host path of nginx's access log.
	AccessLogPath string
	// ToxiproxyURL is host: Toxiproxy's API.
	ToxiproxyURL string
	// WireMockURL is host: WireMock's admin API.
	WireMockURL string
	// APIDelayMS is WireMock's delay in effect, ms.
	APIDelayMS int

	certs   *vendormock.Certs
	runID   string
	session string
	nw      *testcontainers.DockerNetwork
	mu      sync.Mutex
	cs      map[string]testcontainers.Container
	proxies map[int]*toxiproxy.Proxy // by nginx port
	toxiC   testcontainers.Container
	log     io.Writer
}

// readyTimeout bounds each container's readiness wait.
const readyTimeout = 90 * time.Second

// Start makes the run's CA and certificate, renders nginx.conf, and starts
// WireMock, then nginx (which resolves its upstream at start), and
// Toxiproxy with one proxy per port, each waited for: WireMock's health
// answered, nginx answered its probe over TLS verified against the run's
// CA on both ports, and the probe went end to end through both proxies.
// On error everything already started is removed. Errors:
// vendormock.ErrImagesMissing, a missing Root, Docker's, readiness
// timeouts.
func Start(ctx context.Context, opts Options) (s *Site, err error) {
	if opts.Host == "" {
		opts.Host = DefaultHost
	}
	if opts.APIDelayMS < 0 {
		return nil, fmt.Errorf("start page site: negative api delay %d ms", opts.APIDelayMS)
	}
	if fi, err := os.Stat(opts.Root); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("start page site: page folder %q: not a folder", opts.Root)
	}
	if err := vendormock.CheckImages(ctx, opts.Images); err != nil {
		return nil, err
	}
	s = &Site{Host: opts.Host, APIDelayMS: opts.APIDelayMS, session: opts.Session, log: opts.Log,
		cs: map[string]testcontainers.Container{}, proxies: map[int]*toxiproxy.Proxy{},
		runID: "page-" + strconv.FormatInt(time.Now().UnixNano()%1e10, 36)}
	if s.log == nil {
		s.log = io.Discard
	}
	defer func() {
		if err != nil {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			err = errors.Join(err, s.Close(cctx))
			s = nil
		}
	}()
	if err := s.prepare(opts); err != nil {
		return s, err
	}
	t0 := time.Now()
	if s.nw, err = network.New(ctx, network.WithLabels(s.labels())); err != nil {
		return s, fmt.Errorf("create network: %w", err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Add(2)
	go func() {
		defer wg.Done()
		if errs[0] = s.startWireMock(ctx, opts.Images.WireMock); errs[0] == nil {
			errs[0] = s.startNginx(ctx, opts.Images.Nginx, opts.WorkDir, opts.Root)
		}
	}()
	go func() { defer wg.Done(); errs[1] = s.startToxiproxy(ctx, opts.Images.Toxiproxy) }()
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return s, err
	}
	for _, addr := range []string{s.H1Addr, s.H2Addr} {
		if err := s.waitProbe(ctx, addr); err != nil {
			return s, err
		}
	}
	s.logf("page site ready in %.1f s (nginx h1 :%d, h2 :%d behind Toxiproxy; API delay %d ms)", time.Since(t0).Seconds(), PortH1, PortH2, s.APIDelayMS)
	return s, nil
}

// prepare writes the certificates and nginx.conf under WorkDir.
func (s *Site) prepare(opts Options) error {
	dir, err := filepath.Abs(opts.WorkDir)
	if err != nil {
		return fmt.Errorf("resolve work dir: %w", err)
	}
	for _, sub := range []string{"nginx", "log"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return fmt.Errorf("create work dir: %w", err)
		}
	}
	// nginx's workers may run as another user: the log folder must be
	// theirs to write.
	if err := os.Chmod(filepath.Join(dir, "log"), 0o777); err != nil {
		return fmt.Errorf("open log folder: %w", err)
	}
	if s.certs, err = vendormock.GenerateCerts(filepath.Join(dir, "tls"), s.Host, 0); err != nil {
		return err
	}
	s.CAFile = s.certs.CAFile
	sum := sha256.Sum256(s.certs.CA.RawSubjectPublicKeyInfo)
	s.CASPKIHash = base64.StdEncoding.EncodeToString(sum[:])
	conf, err := renderConf(s.Host)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "nginx", "nginx.conf"), conf, 0o644); err != nil {
		return fmt.Errorf("write nginx.conf: %w", err)
	}
	s.AccessLogPath = filepath.Join(dir, "log", AccessLogFile)
	return nil
}

// TLSConfig is a client TLS config trusting only the run's CA, for host
// checks and tests.
func (s *Site) TLSConfig() *tls.Config {
	return &tls.Config{RootCAs: s.certs.CAPool, ServerName: s.Host, MinVersion: tls.VersionTLS12}
}

func (s *Site) labels() map[string]string {
	l := map[string]string{vendormock.LabelRun: s.runID}
	if s.session != "" {
		l[vendormock.LabelSession] = s.session
	}
	return l
}

// run starts one container on the site's network and records it for
// Close (also when its wait fails).
func (s *Site) run(ctx context.Context, name string, req testcontainers.ContainerRequest) (testcontainers.Container, error) {
	req.Name = "lab-" + s.runID + "-" + name
	req.HostConfigModifier = vendormock.PublishOnLoopback(req.ExposedPorts, req.HostConfigModifier)
	if req.Labels == nil {
		req.Labels = map[string]string{}
	}
	maps.Copy(req.Labels, s.labels())
	req.Networks = []string{s.nw.Name}
	req.NetworkAliases = map[string][]string{s.nw.Name: {name}}
	c, err := vendormock.StartContainer(ctx, req)
	if c != nil {
		if dc, ok := c.(*testcontainers.DockerContainer); !ok || dc != nil {
			s.mu.Lock()
			s.cs[name] = c
			s.mu.Unlock()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	s.logf("%s ready", name)
	return c, nil
}

func (s *Site) startWireMock(ctx context.Context, image string) error {
	c, err := s.run(ctx, "wiremock", testcontainers.ContainerRequest{
		Image: image, Cmd: vendormock.WireMockArgs,
		Env:          map[string]string{"JAVA_OPTS": vendormock.WireMockJavaOpts},
		ExposedPorts: []string{"8080/tcp"},
		WaitingFor: wait.ForHTTP("/__admin/health").WithPort("8080/tcp").
			WithPollInterval(200 * time.Millisecond).WithStartupTimeout(readyTimeout),
	})
	if err != nil {
		return err
	}
	addr, err := hostAddr(ctx, c, "8080/tcp")
	if err != nil {
		return err
	}
	s.WireMockURL = "http://" + addr
	stub := wiremock.Get(wiremock.URLPathEqualTo(APIPath)).WillReturnResponse(
		wiremock.NewResponse().WithStatus(http.StatusOK).
			WithHeader("Content-Type", "application/json").
			WithHeader("Cache-Control", "no-store").
			WithBody(`{"items":3,"source":"backend"}`).
			WithFixedDelay(time.Duration(s.APIDelayMS) * time.Millisecond))
	if err := wiremock.NewClient(s.WireMockURL).StubFor(stub); err != nil {
		return fmt.Errorf("register api stub: %w", err)
	}
	return nil
}

func (s *Site) startNginx(ctx context.Context, image, workDir, root string) error {
	work, err := filepath.Abs(workDir)
	if err != nil {
		return fmt.Errorf("resolve work dir: %w", err)
	}
	page, err := filepath.Abs(root)
	if err != nil {
		return fmt.Errorf("resolve page folder: %w", err)
	}
	h1 := strconv.Itoa(PortH1) + "/tcp"
	_, err = s.run(ctx, "nginx", testcontainers.ContainerRequest{
		Image:        image,
		ExposedPorts: []string{h1},
		HostConfigModifier: func(hc *container.HostConfig) {
			hc.Binds = append(hc.Binds,
				filepath.Join(work, "nginx", "nginx.conf")+":"+confPath+":ro",
				filepath.Join(work, "tls")+":"+tlsDir+":ro",
				filepath.Join(work, "log")+":"+logDir,
				page+":"+pageDir+":ro",
			)
		},
		WaitingFor: wait.ForHTTP(probePath).WithPort(h1).WithTLS(true, s.TLSConfig()).
			WithStatusCodeMatcher(func(code int) bool { return code == http.StatusNoContent }).
			WithPollInterval(100 * time.Millisecond).WithStartupTimeout(readyTimeout),
	})
	return err
}

func (s *Site) startToxiproxy(ctx context.Context, image string) error {
	h1, h2 := strconv.Itoa(PortH1)+"/tcp", strconv.Itoa(PortH2)+"/tcp"
	c, err := s.run(ctx, "toxiproxy", testcontainers.ContainerRequest{
		Image:        image,
		Cmd:          []string{"-host", "0.0.0.0", "-port", "8474"},
		ExposedPorts: []string{"8474/tcp", h1, h2},
		WaitingFor: wait.ForHTTP("/version").WithPort("8474/tcp").
			WithPollInterval(100 * time.Millisecond).WithStartupTimeout(readyTimeout),
	})
	if err != nil {
		return err
	}
	s.toxiC = c
	api, err := hostAddr(ctx, c, "8474/tcp")
	if err != nil {
		return err
	}
	if s.H1Addr, err = hostAddr(ctx, c, h1); err != nil {
		return err
	}
	if s.H2Addr, err = hostAddr(ctx, c, h2); err != nil {
		return err
	}
	s.ToxiproxyURL = "http://" + api
	toxi := toxiproxy.NewClient(s.ToxiproxyURL)
	for _, port := range []int{PortH1, PortH2} {
		name := map[int]string{PortH1: "h1", PortH2: "h2"}[port]
		listen := "0.0.0.0:" + strconv.Itoa(port)
		p, err := toxi.CreateProxy(name, listen, "nginx:"+strconv.Itoa(port))
		if err != nil {
			return fmt.Errorf("create proxy %s: %w", name, err)
		}
		s.proxies[port] = p
	}
	return nil
}

// waitProbe probes addr until it answers or readyTimeout passes.
func (s *Site) waitProbe(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	for {
		_, err := s.ProbeRTT(ctx, addr)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("page site path through toxiproxy %s: not ready: %w", addr, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Close removes the containers and the network and deletes the server
// key (the CA, nginx.conf and the access log stay). Safe to call twice.
func (s *Site) Close(ctx context.Context) error {
	s.mu.Lock()
	cs := s.cs
	s.cs = map[string]testcontainers.Container{}
	s.mu.Unlock()
	var errs []error
	for name, c := range cs {
		if err := testcontainers.TerminateContainer(c, testcontainers.StopContext(ctx), testcontainers.StopTimeout(5*time.Second)); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", name, err))
		}
	}
	if s.nw != nil {
		if err := s.nw.Remove(ctx); err != nil {
			errs = append(errs, fmt.Errorf("remove network: %w", err))
		}
		s.nw = nil
	}
	if s.certs != nil {
		if err := os.Remove(s.certs.KeyFile); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove server key: %w", err))
		}
	}
	if len(errs) == 0 && len(cs) > 0 {
		s.logf("page site removed")
	}
	return errors.Join(errs...)
}

func (s *Site) logf(format string, args ...any) {
	fmt.Fprintf(s.log, "pagesite: "+format+"\n", args...)
}

// hostAddr is vendormock.HostAddr.
var hostAddr = vendormock.HostAddr
