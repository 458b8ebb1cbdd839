package vendormock

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoadDefaultProfile(t *testing.T) {
	p := loadTestProfile(t)
	checks := []struct {
		name      string
		got, want any
	}{
		{"name", p.Name, "alimtalk"},
		{"host", p.Host, "api.vendor.test"},
		{"token path", p.API.TokenPath, "/v1/token"},
		{"send path", p.API.SendPath, "/v3/message"},
		{"refkey field", p.API.RefKeyField, "refkey"},
		{"tls min", p.TLS.MinVersion, "1.2"},
		{"tls max", p.TLS.MaxVersion, "1.3"},
		{"session cache", p.TLS.SessionCache, false},
		{"session tickets", p.TLS.SessionTickets, false},
		{"keepalive_timeout", p.Nginx.KeepaliveTimeout, 75 * time.Second},
		// 1,051 requests (token + 50 warm-up + 1,000) must fit one connection.
		{"keepalive_requests >= 1051", p.Nginx.KeepaliveRequests >= 1051, true},
		{"server delay", p.WireMock.ServerDelayMS, 18},
		{"correlation header", p.Client.CorrelationHeader, "X-Refkey"},
		{"idempotency header", p.Client.IdempotencyHeader, ""},
		{"stubs", len(p.Stubs), 6},
		{"dir absolute", filepath.IsAbs(p.Dir), true},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if minV, maxV := p.TLSVersions(); minV != tls.VersionTLS12 || maxV != tls.VersionTLS13 {
		t.Errorf("TLSVersions = %x, %x", minV, maxV)
	}
	for _, s := range p.Stubs {
		if s.Response.BodyFile != "" && s.Response.Body == "" {
			t.Errorf("stub %s: body_file %s not read", s.Name, s.Response.BodyFile)
		}
	}
}

// writeProfile copies the default profile into a temp dir with profile.yaml
// edited by replacing old with new, and returns the dir.
func writeProfile(t *testing.T, edits ...[2]string) string {
	t.Helper()
	src := loadTestProfile(t).Dir
	dst := t.TempDir()
	err := filepath.Walk(src, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if rel == ProfileFile {
			s := string(b)
			for _, e := range edits {
				if !strings.Contains(s, e[0]) {
					t.Fatalf("edit %q: not in profile.yaml", e[0])
				}
				s = strings.Replace(s, e[0], e[1], 1)
			}
			b = []byte(s)
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestLoadProfileInvalid(t *testing.T) {
	for _, tc := range []struct {
		name   string
		edits  [][2]string
		wantIn []string
	}{
		{"unknown key", [][2]string{{"host: api.vendor.test", "host: api.vendor.test\nhots: typo"}}, []string{"hots"}},
		{"host without dot", [][2]string{{"host: api.vendor.test", "host: vendor"}}, []string{"host:"}},
		{"host upper case", [][2]string{{"host: api.vendor.test", "host: API.vendor.test"}}, []string{"host:"}},
		{"tls min above max", [][2]string{{`min_version: "1.2"`, `min_version: "1.3"`}, {`max_version: "1.3"`, `max_version: "1.2"`}}, []string{"tls: min_version 1.3 is above"}},
		{"tls version unknown", [][2]string{{`min_version: "1.2"`, `min_version: "1.0"`}}, []string{"tls.min_version"}},
		{"keepalive_requests zero and upstream pool off", [][2]string{{"keepalive_requests: 100000", "keepalive_requests: 0"}, {"upstream_keepalive: 8", "upstream_keepalive: 0"}},
			[]string{"nginx.keepalive_requests", "nginx.upstream_keepalive:"}},
		{"negative keepalive_timeout", [][2]string{{"keepalive_timeout: 75s", "keepalive_timeout: -1s"}}, []string{"nginx.keepalive_timeout"}},
		{"duration not a duration", [][2]string{{"keepalive_timeout: 75s", "keepalive_timeout: soon"}}, []string{"soon"}},
		{"missing template", [][2]string{{"template: nginx.conf.tmpl", "template: none.tmpl"}}, []string{"nginx.template"}},
		{"template outside the folder", [][2]string{{"template: nginx.conf.tmpl", "template: ../nginx.conf.tmpl"}}, []string{"inside the profile folder"}},
		{"missing stubs", [][2]string{{"stubs: stubs/stubs.yaml", "stubs: stubs/none.yaml"}}, []string{"wiremock.stubs"}},
		{"negative delay", [][2]string{{"server_delay_ms: 18", "server_delay_ms: -5"}}, []string{"wiremock.server_delay_ms"}},
		{"bad correlation header", [][2]string{{"correlation_header: X-Refkey", `correlation_header: "X Refkey"`}}, []string{"client.correlation_header"}},
		{"no response timeout", [][2]string{{"response_timeout: 10s", "response_timeout: 0s"}}, []string{"client.response_timeout"}},
		{"send path without slash", [][2]string{{"send_path: /v3/message", "send_path: v3/message"}}, []string{"api.send_path"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadProfile(writeProfile(t, tc.edits...))
			if !errors.Is(err, ErrInvalidProfile) {
				t.Fatalf("err = %v, want ErrInvalidProfile", err)
			}
			for _, w := range tc.wantIn {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v\nwant it to mention %q", err, w)
				}
			}
		})
	}
}

func TestLoadProfileMissingDir(t *testing.T) {
	_, err := LoadProfile(filepath.Join(t.TempDir(), "nope"))
	if !errors.Is(err, ErrInvalidProfile) {
		t.Fatalf("err = %v, want ErrInvalidProfile", err)
	}
}

// TestProfileStatusTable: the alimtalk profile's status.yaml reaches the
// worker as JSON with 429 NOT_SENT, and a broken table names its file.
func TestProfileStatusTable(t *testing.T) {
	p, err := LoadProfile(DefaultProfileDir)
	if err != nil {
		t.Fatal(err)
	}
	var table struct {
		Statuses map[string]string `json:"statuses"`
	}
	if err := json.Unmarshal([]byte(p.StatusTableJSON), &table); err != nil {
		t.Fatalf("StatusTableJSON %q: %v", p.StatusTableJSON, err)
	}
	if table.Statuses["429"] != "NOT_SENT" {
		t.Errorf("statuses[429] = %q; want NOT_SENT", table.Statuses["429"])
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, StatusTableFile)
	if err := os.WriteFile(bad, []byte("statuses: [unclosed"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadStatusTable(bad); !errors.Is(err, ErrInvalidProfile) || !strings.Contains(err.Error(), bad) {
		t.Errorf("broken table: err = %v; want ErrInvalidProfile naming %s", err, bad)
	}
	if s, err := loadStatusTable(filepath.Join(dir, "none.yaml")); s != "" || err != nil {
		t.Errorf("missing table: %q, %v; want \"\", nil", s, err)
	}
}

// TestSchemeForClientAuth: the sms profile requires mutual TLS, so https
// runs as mtls and plain http is refused; alimtalk keeps what is asked.
func TestSchemeForClientAuth(t *testing.T) {
	sms, err := LoadProfile("vendormock/profiles/sms")
	if err != nil {
		t.Fatal(err)
	}
	ali, err := LoadProfile(DefaultProfileDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		p       *Profile
		asked   Scheme
		want    Scheme
		wantErr bool
	}{
		{sms, SchemeHTTPS, SchemeMTLS, false},
		{sms, SchemeMTLS, SchemeMTLS, false},
		{sms, SchemeHTTP, "", true},
		{ali, SchemeHTTPS, SchemeHTTPS, false},
		{ali, SchemeHTTP, SchemeHTTP, false},
	} {
		got, err := SchemeFor(tc.p, tc.asked)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("SchemeFor(%s, %s) = %q, %v; want %q (error %v)", tc.p.Name, tc.asked, got, err, tc.want, tc.wantErr)
		}
	}
	bad := *ali
	bad.TLS.ClientAuth = "sometimes"
	if probs := bad.validate(); !strings.Contains(strings.Join(probs, "; "), "tls.client_auth") {
		t.Errorf("validate() = %q; want a problem naming tls.client_auth", probs)
	}
}
