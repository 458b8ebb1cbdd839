// What Start prepares before any container runs: the profile, the CA and
// certificates, the nginx configuration, and the WireMock stubs.

package vendormock

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wiremock/go-wiremock"
)

// prepare loads the profile, writes certs and nginx.conf, generates the
// run's credentials and checks the stubs build, all before any container.
func (s *Stack) prepare(opts Options) error {
	dir := opts.ProfileDir
	if dir == "" {
		dir = DefaultProfileDir
	}
	p, err := LoadProfile(dir)
	if err != nil {
		return err
	}
	s.Profile = p
	s.VendorHost = p.Host
	if s.Scheme, err = ParseScheme(string(opts.Scheme)); err != nil {
		return fmt.Errorf("stack options: %w", err)
	}
	asked := s.Scheme
	if s.Scheme, err = SchemeFor(p, asked); err != nil {
		return err
	}
	if s.Scheme != asked {
		s.logf("profile %s requires mutual TLS: scheme %s instead of %s (the worker gets the run's client certificate)", p.Name, s.Scheme, asked)
	}
	if s.HTTP2, err = ParseHTTPVersion(opts.HTTPVersion); err != nil {
		return fmt.Errorf("stack options: %w", err)
	}
	s.VendorURL = "https://" + p.Host
	if !s.Scheme.TLS() {
		// Plain HTTP on the port Toxiproxy listens on.
		s.VendorURL = "http://" + p.Host + ":443"
	}
	s.ServerDelayMS = opts.ServerDelayMS
	if s.ServerDelayMS < 0 {
		s.ServerDelayMS = p.WireMock.ServerDelayMS
	}
	s.KeepaliveTimeout = opts.KeepaliveTimeout
	if s.KeepaliveTimeout <= 0 {
		s.KeepaliveTimeout = p.Nginx.KeepaliveTimeout
	}
	if opts.RateLimit < 0 {
		return fmt.Errorf("stack options: rate limit %d: want >= 0 sends/s (0 = the profile's)", opts.RateLimit)
	}
	if opts.RateLimit > 0 {
		p.RateLimit.SendsPerSecond = opts.RateLimit
	}
	s.RateLimit = p.RateLimit.SendsPerSecond
	if opts.TLSResumption {
		p.TLS.SessionCache, p.TLS.SessionTickets = true, true
	}
	s.NoRequestJournal = opts.NoRequestJournal
	if opts.UpstreamKeepalive < 0 {
		return fmt.Errorf("stack options: upstream keepalive %d: want >= 0 idle connections (0 = the profile's)", opts.UpstreamKeepalive)
	}
	if opts.UpstreamKeepalive > 0 {
		s.Profile.Nginx.UpstreamKeepalive = opts.UpstreamKeepalive
	}
	s.NoUpstreamKeepalive, s.KeepaliveHint = opts.NoUpstreamKeepalive, opts.KeepaliveHint || p.Nginx.KeepaliveHint
	s.imageWorker = opts.Images.Worker
	if opts.BrokerNodes < 0 || opts.BrokerNodes > MaxBrokerNodes {
		return fmt.Errorf("stack options: broker nodes %d: want 1 to %d", opts.BrokerNodes, MaxBrokerNodes)
	}

	work := opts.WorkDir
	if work == "" {
		if work, err = os.MkdirTemp("", "vendormock-"); err != nil {
			return fmt.Errorf("create work dir: %w", err)
		}
	}
	if s.WorkDir, err = filepath.Abs(work); err != nil {
		return fmt.Errorf("resolve work dir: %w", err)
	}
	for _, d := range []string{"nginx", "log"} {
		if err := os.MkdirAll(filepath.Join(s.WorkDir, d), 0o755); err != nil {
			return fmt.Errorf("create work dir: %w", err)
		}
	}
	s.AccessLogPath = filepath.Join(s.WorkDir, "log", AccessLogFile)
	if err := os.Remove(s.AccessLogPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove old access log: %w", err)
	}
	s.ErrorLogPath = filepath.Join(s.WorkDir, "log", ErrorLogFile)
	if err := os.Remove(s.ErrorLogPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove old error log: %w", err)
	}

	clientDir := ""
	if s.Scheme == SchemeMTLS {
		clientDir = filepath.Join(s.WorkDir, "tls-client")
	}
	certs, err := GenerateCertsWithClient(filepath.Join(s.WorkDir, "tls"), clientDir, p.Host, 0)
	if err != nil {
		return err
	}
	s.CAFile, s.CAPool = certs.CAFile, certs.CAPool
	s.ClientCertFile, s.ClientKeyFile = certs.ClientCertFile, certs.ClientKeyFile

	s.RunID = randomHex(4)
	s.ClientID = "lab-" + randomHex(8)
	s.ClientSecret = randomHex(24)
	s.accessToken = randomHex(24)
	if _, err := s.stubRules(); err != nil {
		return err
	}

	conf, err := RenderNginxConf(p, s.nginxConfig(s.KeepaliveTimeout, s.HTTP2, false))
	if err != nil {
		return err
	}
	if s.RateLimit > 0 && !bytes.Contains(conf, []byte("limit_req_zone")) {
		return fmt.Errorf("profile %s: a rate limit of %d sends/s is asked, but its nginx template %s has no limit_req_zone: it would not be enforced", p.Name, s.RateLimit, p.Nginx.Template)
	}
	if err := writeFile(filepath.Join(s.WorkDir, "nginx", "nginx.conf"), conf, 0o644); err != nil {
		return err
	}
	return nil
}

// stubRules builds the profile's stubs with this run's values.
func (s *Stack) stubRules() ([]*wiremock.StubRule, error) {
	return BuildStubRules(s.Profile.Stubs, StubVars{
		ClientID: s.ClientID, ClientSecret: s.ClientSecret,
		AccessToken: s.accessToken, ServerDelayMS: s.ServerDelayMS,
	})
}

// registerStubs registers the profile's stubs through go-wiremock, in
// place of every mapping WireMock holds, without a gap (replaceStubs).
func (s *Stack) registerStubs() error {
	rules, err := s.stubRules()
	if err != nil {
		return err
	}
	if err := s.replaceStubs(rules); err != nil {
		return fmt.Errorf("wiremock: %w", err)
	}
	s.logf("%d stubs registered from %s (server delay %d ms)", len(rules), s.Profile.WireMock.Stubs, s.ServerDelayMS)
	return nil
}

// SchemeFor is the scheme the stack runs for a validated profile when
// asked is requested: a profile that requires client certificates
// (tls.client_auth: required) turns https into mtls and refuses plain http
// (an error naming the profile and the schemes it allows). The lab's
// argument check calls it, so the refusal comes before anything starts.
func SchemeFor(p *Profile, asked Scheme) (Scheme, error) {
	if p.TLS.ClientAuth != ClientAuthRequired {
		return asked, nil
	}
	switch asked {
	case SchemeHTTP:
		return "", fmt.Errorf("stack options: scheme http: profile %s requires mutual TLS (tls.client_auth: required); use https or mtls", p.Name)
	case SchemeHTTPS:
		return SchemeMTLS, nil
	}
	return asked, nil
}
