package vendormock

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestRenderNginxConfGolden(t *testing.T) {
	p := loadTestProfile(t)
	conf, err := RenderNginxConf(p, NewNginxConfig(p, 0))
	if err != nil {
		t.Fatalf("RenderNginxConf: %v", err)
	}
	golden(t, "nginx.conf.golden", conf)

	s := string(conf)
	for _, want := range []string{
		"listen 443 ssl default_server;",
		"server_name api.vendor.test;",
		"ssl_protocols TLSv1.2 TLSv1.3;",
		"ssl_session_cache off;",
		"ssl_session_tickets off;",
		"keepalive_timeout 75s;",
		"keepalive_requests 100000;",
		"server wiremock:8080;",
		"keepalive 8;",
		"proxy_http_version 1.1;",
		`proxy_set_header Connection "";`,
		"ssl_certificate     /etc/nginx/lab/server.pem;",
		"ssl_certificate_key /etc/nginx/lab/server.key;",
		"access_log /var/log/nginx/lab/access.log lab;",
		"log_format lab escape=json '" + LogFormat("X-Refkey") + "';",
		"location = /__lab/probe {",
		"return 204;",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("nginx.conf lacks %q", want)
		}
	}
	directives := regexp.MustCompile(`(?m)#.*$`).ReplaceAllString(s, "")
	for _, bad := range []string{"http2", "user ", "{{", "<no value>"} {
		if strings.Contains(directives, bad) {
			t.Errorf("nginx.conf contains %q", bad)
		}
	}
	// keepalive_timeout takes one parameter: no Keep-Alive hint header.
	if m := regexp.MustCompile(`(?m)^\s*keepalive_timeout [^;]* [^;]*;`).FindString(s); m != "" {
		t.Errorf("keepalive_timeout has a second parameter: %q", m)
	}
}

func TestNginxConfigOverrides(t *testing.T) {
	p := loadTestProfile(t)
	p.TLS.MinVersion, p.TLS.MaxVersion = "1.2", "1.2"
	p.TLS.SessionCache, p.TLS.SessionTickets = true, true
	p.Client.CorrelationHeader = "X-Request-Ref"
	c := NewNginxConfig(p, 30*time.Second)
	conf, err := RenderNginxConf(p, c)
	if err != nil {
		t.Fatal(err)
	}
	s := string(conf)
	for _, want := range []string{
		"keepalive_timeout 30s;", "ssl_protocols TLSv1.2;", "ssl_session_cache shared:lab:1m;",
		"ssl_session_tickets on;", `"refkey":"$http_x_request_ref"}';`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("nginx.conf lacks %q", want)
		}
	}
}

// TestNginxTransports: each scheme and HTTP version renders its listen
// line and TLS block; the defaults (https, 1.1) are the golden file's.
func TestNginxTransports(t *testing.T) {
	p := loadTestProfile(t)
	tests := []struct {
		scheme      Scheme
		http2       bool
		want, avoid []string
	}{
		{SchemeHTTPS, false, []string{"listen 443 ssl default_server;", "ssl_certificate "},
			[]string{"http2", "ssl_verify_client", "@client_cert_refused"}},
		{SchemeHTTP, false, []string{"listen 443 default_server;"},
			[]string{"ssl_certificate", "ssl_protocols", " ssl ", "http2"}},
		{SchemeHTTP, true, []string{"listen 443 default_server;"}, // no h2c
			[]string{"ssl_certificate", "ssl_protocols", " ssl ", "http2"}},
		{SchemeHTTPS, true, []string{"listen 443 ssl http2 default_server;"},
			[]string{"ssl_verify_client"}},
		{SchemeMTLS, false, []string{
			"listen 443 ssl default_server;", "ssl_client_certificate /etc/nginx/lab/ca.pem;", "ssl_verify_client on;",
			"error_page 495 496 = @client_cert_refused;", "location @client_cert_refused {", "return 421 '{",
		}, []string{"http2"}},
		{SchemeMTLS, true, []string{"listen 443 ssl http2 default_server;", "ssl_verify_client on;"}, nil},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s h2=%v", tc.scheme, tc.http2), func(t *testing.T) {
			conf, err := RenderNginxConf(p, NewNginxConfig(p, 0).WithTransport(tc.scheme, tc.http2))
			if err != nil {
				t.Fatal(err)
			}
			directives := regexp.MustCompile(`(?m)#.*$`).ReplaceAllString(string(conf), "")
			for _, w := range tc.want {
				if !strings.Contains(directives, w) {
					t.Errorf("nginx.conf lacks %q", w)
				}
			}
			for _, a := range tc.avoid {
				if strings.Contains(directives, a) {
					t.Errorf("nginx.conf contains %q", a)
				}
			}
		})
	}
}

func TestParseScheme(t *testing.T) {
	for in, want := range map[string]Scheme{"": SchemeHTTPS, "http": SchemeHTTP, "https": SchemeHTTPS, "mtls": SchemeMTLS} {
		if got, err := ParseScheme(in); err != nil || got != want {
			t.Errorf("ParseScheme(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseScheme("quic"); err == nil || !strings.Contains(err.Error(), "http, https, mtls") {
		t.Errorf("ParseScheme(quic): %v, want an error naming the known schemes", err)
	}
	if _, err := ParseHTTPVersion("3"); err == nil || !strings.Contains(err.Error(), "1.1, 2") {
		t.Errorf("ParseHTTPVersion(3): %v, want an error naming the known versions", err)
	}
}

func TestNginxTime(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0"}, {-time.Second, "0"}, {75 * time.Second, "75s"}, {1500 * time.Millisecond, "1500ms"},
		{2 * time.Minute, "120s"},
	} {
		if got := nginxTime(tc.d); got != tc.want {
			t.Errorf("nginxTime(%s) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

// TestTransportEnv: under mtls the worker gets its client certificate's
// paths, under h2 HTTP_VERSION=2; a caller's value wins; https/1.1 adds
// nothing.
func TestTransportEnv(t *testing.T) {
	plain := (&Stack{}).transportEnv(map[string]string{"GOMAXPROCS": "1"})
	if len(plain) != 1 || len((&Stack{}).clientCertBinds()) != 0 {
		t.Errorf("https/1.1 env %v binds %v, want only the caller's env", plain, (&Stack{}).clientCertBinds())
	}
	s := &Stack{ClientCertFile: "/w/tls-client/client.pem", ClientKeyFile: "/w/tls-client/client.key", HTTP2: true}
	env := s.transportEnv(map[string]string{"HTTP_VERSION": "1.1"})
	if env["CLIENT_CERT_FILE"] != WorkerClientCertPath || env["CLIENT_KEY_FILE"] != WorkerClientKeyPath || env["HTTP_VERSION"] != "1.1" {
		t.Errorf("mtls h2 env %v: want the client paths and the caller's HTTP_VERSION", env)
	}
	if b := s.clientCertBinds(); len(b) != 2 || !strings.HasSuffix(b[1], ":"+WorkerClientKeyPath+":ro") {
		t.Errorf("binds %v, want cert and key read-only", b)
	}
}

// TestNginxRateLimit: a profile's rate_limit renders limit_req on the send
// path for the whole account (one key, the server name) with 429, the
// burst and Retry-After on the refusal; without one (the alimtalk
// profile's default) no limit_req is rendered, so the golden file holds.
func TestNginxRateLimit(t *testing.T) {
	p := loadTestProfile(t)
	off, err := RenderNginxConf(p, NewNginxConfig(p, 0))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(off), "limit_req") {
		t.Errorf("no rate_limit, but nginx.conf has limit_req")
	}
	p.RateLimit = RateLimitSpec{SendsPerSecond: 50, Burst: 4, RetryAfterS: 2}
	conf, err := RenderNginxConf(p, NewNginxConfig(p, 0))
	if err != nil {
		t.Fatal(err)
	}
	s := string(conf)
	for _, want := range []string{
		"limit_req_zone $server_name zone=account_sends:1m rate=50r/s;",
		"limit_req_status 429;",
		"location = /v3/message {",
		"limit_req zone=account_sends burst=4 nodelay;",
		"error_page 429 = @rate_limited;",
		"add_header Retry-After 2 always;",
		`return 429 '{"code":"4290"`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("nginx.conf lacks %q", want)
		}
	}
	p.RateLimit = RateLimitSpec{SendsPerSecond: 10}
	conf, err = RenderNginxConf(p, NewNginxConfig(p, 0))
	if err != nil {
		t.Fatal(err)
	}
	if s := string(conf); !strings.Contains(s, "limit_req zone=account_sends;") || !strings.Contains(s, "add_header Retry-After 1 always;") {
		t.Errorf("burst 0 and retry_after_s 0: want no burst and Retry-After 1:\n%s", s)
	}
}
