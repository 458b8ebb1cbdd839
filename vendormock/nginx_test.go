package vendormock

import (
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
