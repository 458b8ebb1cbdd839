package pagesite

import (
	"bytes"
	"fmt"
	"text/template"
)

// Ports nginx and Toxiproxy listen on inside their containers: one server
// block (and one proxy) per HTTP version, since nginx 1.22 (the offline
// image) takes http2 as a listen parameter, so per address and port.
const (
	PortH1 = 8441 // TLS, ALPN offers http/1.1 only
	PortH2 = 8442 // TLS, ALPN offers h2 (and http/1.1)
)

// Paths inside the nginx container.
const (
	confPath  = "/etc/nginx/nginx.conf"
	tlsDir    = "/etc/nginx/lab"     // server.pem, server.key (read-only bind mount)
	logDir    = "/var/log/nginx/lab" // AccessLogFile (bind mount the host reads)
	pageDir   = "/srv/page"          // Options.Root (read-only bind mount)
	probePath = "/__lab/probe"       // answered 204 by nginx itself, not logged
)

// AccessLogFile is the access log's name in WorkDir/log.
const AccessLogFile = "access.log"

// LogFormat is the access log's line: one JSON object per request, every
// value a string escaped by nginx (escape=json). conn is nginx's
// $connection, a serial number per accepted connection: since Toxiproxy
// opens one upstream connection per client connection, distinct values
// count the browser's connections. ParseAccessLog reads it.
const LogFormat = `{"msec":"$msec","conn":"$connection","conn_reqs":"$connection_requests",` +
	`"port":"$server_port","proto":"$server_protocol","tls":"$ssl_protocol",` +
	`"method":"$request_method","uri":"$request_uri","status":"$status","bytes":"$bytes_sent","rt":"$request_time"}`

// confData is what the nginx.conf template renders.
type confData struct {
	Host       string
	LogFormat  string
	Upstream   string
	Ports      []confPort
	TLSDir     string
	LogDir     string
	PageDir    string
	ProbePath  string
	AccessFile string
}

type confPort struct {
	Port  int
	HTTP2 bool
}

// confTemplate is nginx.conf of the page site. Session cache and tickets
// are off (every load pays a full handshake, as a first visit does);
// keep-alive is nginx's default 75 s, longer than any load; the pages are
// served with Cache-Control: no-store besides the browser's disabled cache.
var confTemplate = template.Must(template.New("nginx.conf").Option("missingkey=error").Parse(`# Rendered by vendormock/pagesite. Do not edit: edit nginx.go.
worker_processes 1;
pid /tmp/nginx.pid;
error_log stderr warn;

events {
    worker_connections 1024;
}

http {
    log_format page escape=json '{{.LogFormat}}';
    access_log {{.LogDir}}/{{.AccessFile}} page;
    server_tokens off;
    sendfile on;
    tcp_nodelay on;
    keepalive_timeout 75s;
    types {
        text/html html;
        image/png png;
        application/json json;
    }
    default_type application/octet-stream;

    ssl_certificate     {{.TLSDir}}/server.pem;
    ssl_certificate_key {{.TLSDir}}/server.key;
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_session_cache off;
    ssl_session_tickets off;

    # WireMock, kept alive: the API call's time is the backend's delay, not
    # a connection nginx opens behind itself.
    upstream api {
        server {{.Upstream}};
        keepalive 8;
    }
{{range .Ports}}
    server {
{{- if .HTTP2}}
        # ALPN offers h2: nginx 1.22 takes http2 as a listen parameter
        # ("http2 on" came with 1.25.1).
        listen {{.Port}} ssl http2;
{{- else}}
        # No http2 parameter: ALPN offers http/1.1 alone.
        listen {{.Port}} ssl;
{{- end}}
        server_name {{$.Host}};

        location = {{$.ProbePath}} {
            access_log off;
            return 204;
        }
        # /run/<load id>/api/...: the page's API call, to WireMock.
        location ~ ^/run/[^/]+/api/ {
            rewrite ^/run/[^/]+/(.*)$ /$1 break;
            proxy_pass http://api;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_read_timeout 60s;
        }
        # /run/<load id>/...: the page folder; the load id only tags the
        # access log's lines with the load that asked.
        location /run/ {
            rewrite ^/run/[^/]+/(.*)$ /$1 break;
            root {{$.PageDir}};
            add_header Cache-Control "no-store" always;
        }
    }
{{end}}
}
`))

// renderConf renders nginx.conf for host.
func renderConf(host string) ([]byte, error) {
	var b bytes.Buffer
	err := confTemplate.Execute(&b, confData{
		Host: host, LogFormat: LogFormat, Upstream: "wiremock:8080",
		Ports:  []confPort{{Port: PortH1}, {Port: PortH2, HTTP2: true}},
		TLSDir: tlsDir, LogDir: logDir, PageDir: pageDir, ProbePath: probePath, AccessFile: AccessLogFile,
	})
	if err != nil {
		return nil, fmt.Errorf("render nginx.conf: %w", err)
	}
	return b.Bytes(), nil
}
