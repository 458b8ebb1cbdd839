package vendormock

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
)

// Additions for fault scenarios: nginx config variants reloaded
// in place, extra WireMock stubs, a rotated access token, and extra
// Toxiproxy proxies (another RTT, the broker path). None of them changes
// what Start does.

// ErrNginxConfig is returned (wrapped) when a rendered nginx config
// variant fails `nginx -t` or cannot be built; the running config is then
// left as it was.
var ErrNginxConfig = errors.New("nginx config variant refused")

// NginxVariant changes the nginx config of a running stack. The zero value
// is the profile's config with the stack's keepalive_timeout.
type NginxVariant struct {
	// KeepaliveTimeout overrides nginx keepalive_timeout (one parameter
	// only: no Keep-Alive hint reaches the client); 0 = the stack's.
	KeepaliveTimeout time.Duration
	// SendLocation, when set, adds "location = <send path> { ... }" with
	// these directives before the catch-all "location / {", so only the
	// send call sees the variant (for example an upstream nobody listens
	// on for a 502, or a proxy_read_timeout below the server delay for a
	// 504) while the token call keeps working.
	SendLocation string
	// HTTP2 makes nginx offer h2 through ALPN (TLS schemes only) even if
	// the stack started with HTTP/1.1 alone, so one stack serves scenarios
	// of either HTTP version: a client that offers only http/1.1 still
	// gets it. A stack started with HTTP_VERSION=2 offers h2 always.
	HTTP2 bool
	// RateLimit, above 0, is the vendor's sends per second for the whole
	// account in this variant: nginx limit_req on the send path, 429 with
	// Retry-After above it (the profile's burst and Retry-After;
	// docs/deployment.md#vendor-rate-limit); 0 keeps the stack's
	// (Options.RateLimit or the profile's). Not with SendLocation: both
	// are the send path's location.
	RateLimit int
	// KeepaliveHint sends "Keep-Alive: timeout=N" with N the variant's
	// keepalive_timeout (its second parameter), whatever the profile
	// says; false keeps the stack's (Options.KeepaliveHint or the
	// profile's nginx.keepalive_hint).
	KeepaliveHint bool
}

// NginxConf renders the profile's nginx.conf for v. Errors: the template
// fails, or SendLocation is set and the rendered config has no
// "location / {" to put it before.
func (s *Stack) NginxConf(v NginxVariant) ([]byte, error) {
	ka := v.KeepaliveTimeout
	if ka <= 0 {
		ka = s.KeepaliveTimeout
	}
	if v.RateLimit < 0 || v.RateLimit > 0 && strings.TrimSpace(v.SendLocation) != "" {
		return nil, fmt.Errorf("%w: rate limit %d with a send location: want a limit >= 0, and not both", ErrNginxConfig, v.RateLimit)
	}
	c := s.nginxConfig(ka, s.HTTP2 || v.HTTP2, v.KeepaliveHint)
	if v.RateLimit > 0 {
		c.RateLimit = v.RateLimit
	}
	conf, err := RenderNginxConf(s.Profile, c)
	if err != nil {
		return nil, err
	}
	if c.RateLimit > 0 && !bytes.Contains(conf, []byte("limit_req_zone")) {
		return nil, fmt.Errorf("%w: profile %s: its nginx template %s has no limit_req_zone: a rate limit of %d sends/s would not be enforced", ErrNginxConfig, s.Profile.Name, s.Profile.Nginx.Template, c.RateLimit)
	}
	if strings.TrimSpace(v.SendLocation) == "" {
		return conf, nil
	}
	const anchor = "location / {"
	i := bytes.Index(conf, []byte(anchor))
	if i < 0 {
		return nil, fmt.Errorf("%w: the profile's template has no %q to add the send location before", ErrNginxConfig, anchor)
	}
	var b bytes.Buffer
	b.Write(conf[:i])
	fmt.Fprintf(&b, "location = %s {\n", s.Profile.API.SendPath)
	for _, l := range strings.Split(strings.TrimSpace(v.SendLocation), "\n") {
		fmt.Fprintf(&b, "            %s\n", strings.TrimSpace(l))
	}
	b.WriteString("        }\n\n        ")
	b.Write(conf[i:])
	return b.Bytes(), nil
}

// ReloadNginx writes the config of v over the bind-mounted nginx.conf (in
// place, so the container sees it), checks it with `nginx -t` and applies
// it with `nginx -s reload` (graceful: old worker processes finish their
// requests and close their idle keep-alive connections). When the check
// fails the previous config is written back and ErrNginxConfig is
// returned with nginx's message. KeepaliveTimeout is updated to the value
// in effect, and RateLimit to the variant's (the stack's when 0). It
// returns once nginx answers ProbePath again through Toxiproxy.
func (s *Stack) ReloadNginx(ctx context.Context, v NginxVariant) error {
	conf, err := s.NginxConf(v)
	if err != nil {
		return fmt.Errorf("reload nginx: %w", err)
	}
	s.mu.Lock()
	c := s.containers["nginx"]
	s.mu.Unlock()
	if c == nil {
		return fmt.Errorf("reload nginx: no nginx container")
	}
	path := filepath.Join(s.WorkDir, "nginx", "nginx.conf")
	old, err := readFileBytes(path)
	if err != nil {
		return fmt.Errorf("reload nginx: %w", err)
	}
	if err := writeFile(path, conf, 0o644); err != nil {
		return fmt.Errorf("reload nginx: %w", err)
	}
	exec := func(cmd ...string) (string, error) {
		code, r, err := c.Exec(ctx, cmd)
		var out []byte
		if r != nil {
			out, _ = io.ReadAll(r)
		}
		if err != nil {
			return string(out), err
		}
		if code != 0 {
			return string(out), fmt.Errorf("%s exited %d", strings.Join(cmd, " "), code)
		}
		return string(out), nil
	}
	if out, err := exec("nginx", "-t", "-q"); err != nil {
		_ = writeFile(path, old, 0o644)
		return fmt.Errorf("reload nginx: %w: %v: %s", ErrNginxConfig, err, strings.TrimSpace(out))
	}
	if out, err := exec("nginx", "-s", "reload"); err != nil {
		return fmt.Errorf("reload nginx: %w: %s", err, strings.TrimSpace(out))
	}
	if v.KeepaliveTimeout > 0 {
		s.KeepaliveTimeout = v.KeepaliveTimeout
	}
	s.RateLimit = s.Profile.RateLimit.SendsPerSecond
	if v.RateLimit > 0 {
		s.RateLimit = v.RateLimit
	}
	// The master re-reads the config on SIGHUP and starts new worker
	// processes; give it a moment, then make sure the path answers.
	select {
	case <-ctx.Done():
		return fmt.Errorf("reload nginx: %w", ctx.Err())
	case <-time.After(500 * time.Millisecond):
	}
	if err := s.waitVendorPath(ctx); err != nil {
		return fmt.Errorf("reload nginx: %w", err)
	}
	s.logf("nginx reloaded (keepalive_timeout %s, send location variant %t, h2 offered %t, rate limit %d sends/s)", s.KeepaliveTimeout, v.SendLocation != "", s.HTTP2 || v.HTTP2, s.RateLimit)
	return nil
}

// AddStubs registers extra WireMock stubs (the profile's stub format, with
// the run's ${client_id}, ${client_secret}, ${access_token}) on top of the
// profile's; give them a priority below the profile's numbers (1 is tried
// first; among equal priorities WireMock tries the newest first).
// ResetStubs removes them. Errors: ErrInvalidStubs, WireMock failing.
func (s *Stack) AddStubs(ctx context.Context, specs []StubSpec) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("add stubs: %w", err)
	}
	rules, err := BuildStubRules(specs, StubVars{
		ClientID: s.ClientID, ClientSecret: s.ClientSecret,
		AccessToken: s.accessToken, ServerDelayMS: s.ServerDelayMS,
	})
	if err != nil {
		return fmt.Errorf("add stubs: %w", err)
	}
	for _, r := range rules { // registerStubs would clear the profile's
		if err := s.wm.StubFor(r); err != nil {
			return fmt.Errorf("add stubs: %w", err)
		}
	}
	s.logf("%d extra stubs registered", len(rules))
	return nil
}

// ResetStubs replaces every stub mapping (the request journal stays) with
// the profile's stubs at the current server delay and access token; a
// request arriving meanwhile meets the old stubs or the new ones, never
// none (replaceStubs).
func (s *Stack) ResetStubs(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("reset stubs: %w", err)
	}
	if err := s.registerStubs(); err != nil { // replaces every mapping
		return fmt.Errorf("reset stubs: %w", err)
	}
	return nil
}

// RotateAccessToken makes the vendor issue a new access token and refuse
// the old one with 401 (the profile's send-unauthorized stub): a token
// that expired early on the vendor's side. Extra stubs are removed
// (ResetStubs). The new token is never logged.
func (s *Stack) RotateAccessToken(ctx context.Context) error {
	s.accessToken = randomHex(24)
	if err := s.ResetStubs(ctx); err != nil {
		return fmt.Errorf("rotate access token: %w", err)
	}
	s.logf("access token rotated: the old one now gets 401")
	return nil
}

// Toxiproxy returns a client of the stack's Toxiproxy API, for proxies of
// a scenario's own (AddProxy) and their toxics.
func (s *Stack) Toxiproxy() *toxiproxy.Client { return s.toxi }

// AddProxy creates (or replaces) a Toxiproxy proxy listening on port in
// the Toxiproxy container and forwarding to upstream ("host:port" on the
// run's network), with latency toxics for rttMS as SetRTT does (0 =
// none). Containers reach it as VendorHost:port (the Toxiproxy container's
// alias), so a worker given -vendor-addr VendorHost:port still verifies
// the vendor's certificate, or as AliasToxiproxy:port for another service
// (the broker). Errors: a bad port or rtt, the Toxiproxy API failing.
func (s *Stack) AddProxy(ctx context.Context, name string, port int, upstream string, rttMS int) (*toxiproxy.Proxy, error) {
	if port <= 0 || port > 65535 || port == 443 || port == 8474 {
		return nil, fmt.Errorf("add proxy %s: port %d not allowed (1..65535, not 443 or 8474)", name, port)
	}
	if rttMS < 0 {
		return nil, fmt.Errorf("add proxy %s: negative rtt %d ms", name, rttMS)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("add proxy %s: %w", name, err)
	}
	if old, err := s.toxi.Proxy(name); err == nil {
		_ = old.Delete()
	}
	p, err := s.toxi.CreateProxy(name, net.JoinHostPort("0.0.0.0", strconv.Itoa(port)), upstream)
	if err != nil {
		return nil, fmt.Errorf("add proxy %s: %w", name, err)
	}
	if err := addLatencyToxics(p, rttMS); err != nil {
		return nil, fmt.Errorf("add proxy %s: %w", name, err)
	}
	// Check the toxics are really there: numbers measured through a proxy
	// whose latency silently failed to apply would be wrong.
	ts, err := p.Toxics()
	if err != nil {
		return nil, fmt.Errorf("add proxy %s: list toxics: %w", name, err)
	}
	got := 0
	for _, t := range ts {
		if t.Type == "latency" {
			got += int(toFloat(t.Attributes["latency"]))
		}
	}
	if got != rttMS {
		return nil, fmt.Errorf("add proxy %s: %w: latency toxics add up to %d ms, want %d", name, ErrRTTNotApplied, got, rttMS)
	}
	s.logf("proxy %s: toxiproxy:%d -> %s, rtt %d ms", name, port, upstream, rttMS)
	return p, nil
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int:
		return float64(x)
	case int64:
		return float64(x)
	}
	return 0
}

func readFileBytes(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Base(path), err)
	}
	return b, nil
}

// Validate checks one stub as LoadStubs does (method, exactly one URL
// matcher, matchers, response). Errors wrap ErrInvalidStubs and name the
// stub and key at fault.
func (s StubSpec) Validate() error {
	if errs := s.validate(); len(errs) > 0 {
		return fmt.Errorf("%w: stub %q: %s", ErrInvalidStubs, s.Name, strings.Join(errs, "; "))
	}
	return nil
}
