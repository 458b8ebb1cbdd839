package pagesite

import (
	"os"
	"strings"
	"testing"
)

// TestRenderConf: one server block per port, h2 offered only on PortH2,
// every request logged in LogFormat, the API proxied to WireMock kept
// alive, TLS resumption off.
func TestRenderConf(t *testing.T) {
	b, err := renderConf(DefaultHost)
	if err != nil {
		t.Fatal(err)
	}
	conf := string(b)
	for _, want := range []string{
		"listen 8441 ssl;", "listen 8442 ssl http2;", "server_name page.lab.test;",
		"log_format page escape=json '" + LogFormat + "';", "access_log /var/log/nginx/lab/access.log page;",
		"ssl_session_cache off;", "ssl_session_tickets off;", "keepalive 8;", `proxy_set_header Connection "";`,
		"root /srv/page;", `add_header Cache-Control "no-store" always;`,
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("nginx.conf lacks %q", want)
		}
	}
	var listens []string
	for _, l := range strings.Split(conf, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "listen ") {
			listens = append(listens, l)
		}
	}
	if len(listens) != 2 || strings.Contains(listens[0], "http2") || !strings.Contains(listens[1], "http2") {
		t.Errorf("listen lines %q; want h2 on the second only", listens)
	}
	if strings.Count(conf, "server {") != 2 {
		t.Errorf("want two server blocks:\n%s", conf)
	}
}

func TestParseAccessLog(t *testing.T) {
	f, err := os.Open("testdata/access.log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines, err := ParseAccessLog(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 3 || lines[0].Conn != "5" || lines[0].Proto != "HTTP/1.1" || lines[1].URI != "/run/x0p100/img/i000.png" || lines[1].LoadID() != "x0p100" {
		t.Errorf("lines %+v", lines)
	}
	for _, bad := range []string{"{", `{"conn":"","uri":"/x"}`} {
		if _, err := ParseAccessLog(strings.NewReader(bad + "\n")); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if (LogLine{URI: "/__lab/probe"}).LoadID() != "" || (LogLine{URI: "/run/r1-p10-h2/p10.html"}).LoadID() != "r1-p10-h2" {
		t.Error("LoadID")
	}
	if lines, err := ReadAccessLog(t.TempDir() + "/none.log"); err != nil || lines != nil {
		t.Errorf("a log nginx has not written yet: %v, %v", lines, err)
	}
}

func TestInsideAddr(t *testing.T) {
	if InsideAddr(PortH2) != "127.0.0.1:8442" {
		t.Error(InsideAddr(PortH2))
	}
}
