package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/queues"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

var baseEnv = map[string]string{
	"VENDOR_URL": "https://api.vendor.test", "VENDOR_CLIENT_ID": "lab", "VENDOR_CLIENT_SECRET": "s3cr3t",
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		wantErr string
		check   func(t *testing.T, c worker.Config)
	}{
		{
			name: "env fallbacks and defaults", env: map[string]string{
				"AMQP_URL": "amqp://u:p@rabbit:5672/", "VENDOR_URL": "https://api.vendor.test",
				"VENDOR_CA_FILE": "/lab/ca.pem", "VENDOR_CLIENT_ID": "lab", "VENDOR_CLIENT_SECRET": "s3cr3t",
			},
			check: func(t *testing.T, c worker.Config) {
				if c.AMQPURL != "amqp://u:p@rabbit:5672/" || c.CAFile != "/lab/ca.pem" || c.ClientSecret != "s3cr3t" {
					t.Errorf("env not used: %v", c)
				}
				if c.Queue != worker.DefaultQueue || c.Strategy != worker.DefaultStrategy || c.TLSMax != "1.3" ||
					c.WindowEnd != "20:50" || c.CorrelationHeader != "X-Refkey" || c.IdempotencyHeader != "" {
					t.Errorf("defaults not applied: %v", c)
				}
			},
		},
		{
			name: "flags win over env",
			args: []string{"-vendor-url", "https://other.test:8443", "-strategy", "per-request", "-tls-max", "1.2",
				"-max-messages", "1050", "-clock-start", "2026-11-30T20:49:50+09:00", "-records", "/out/r.jsonl",
				"-idle-conn-timeout", "50s", "-response-timeout", "2s"},
			env: baseEnv,
			check: func(t *testing.T, c worker.Config) {
				if c.VendorURL != "https://other.test:8443" || c.Strategy != "per-request" || c.TLSMax != "1.2" || c.MaxMessages != 1050 {
					t.Errorf("flags not used: %v", c)
				}
				if want := time.Date(2026, 11, 30, 11, 49, 50, 0, time.UTC); !c.ClockStart.Equal(want) {
					t.Errorf("clock start %v, want %v", c.ClockStart, want)
				}
				if c.IdleConnTimeout != 50*time.Second || c.ResponseTimeout != 2*time.Second || c.RecordsPath != "/out/r.jsonl" {
					t.Errorf("durations/paths: %v", c)
				}
			},
		},
		{
			name: "matrix settings from env", env: map[string]string{
				"VENDOR_URL": "https://api.vendor.test", "VENDOR_CLIENT_ID": "lab", "VENDOR_CLIENT_SECRET": "s3cr3t",
				"CONCURRENCY": "8", "POOL_SIZE": "2", "HTTP_VERSION": "2",
				"CLIENT_CERT_FILE": "/lab/client.pem", "CLIENT_KEY_FILE": "/lab/client-key.pem",
			},
			check: func(t *testing.T, c worker.Config) {
				if c.Concurrency != 8 || c.PoolSize != 2 || c.HTTPVersion != "2" ||
					c.ClientCertFile != "/lab/client.pem" || c.ClientKeyFile != "/lab/client-key.pem" {
					t.Errorf("matrix env not used: %v", c)
				}
			},
		},
		{
			name: "bad concurrency from env", env: map[string]string{
				"VENDOR_URL": "https://api.vendor.test", "VENDOR_CLIENT_ID": "lab", "VENDOR_CLIENT_SECRET": "s3cr3t",
				"CONCURRENCY": "0x",
			},
			wantErr: "CONCURRENCY",
		},
		{
			name: "replica and queue settings from env", env: map[string]string{
				"VENDOR_URL": "https://api.vendor.test", "VENDOR_CLIENT_ID": "lab", "VENDOR_CLIENT_SECRET": "s3cr3t",
				"QUEUE_TYPE": "quorum", "DELIVERY_LIMIT": "3", "SINGLE_ACTIVE_CONSUMER": "false", "WORKER_ID": "w-2",
				"OPS_ADDR": "off", "RETRY_MAX_DELAY": "90s", "VENDOR_STATUS_TABLE": "/profile/status.yaml",
				"LEDGER": "postgres://lab@db:5432/ledger", "SEND_INTERVAL": "50ms",
			},
			check: func(t *testing.T, c worker.Config) {
				if c.QueueType != "quorum" || c.DeliveryLimit != 3 || !c.DisableSingleActiveConsumer || c.WorkerID != "w-2" || c.SendInterval != 50*time.Millisecond ||
					c.OpsAddr != "" || c.RetryMaxDelay != 90*time.Second || c.VendorStatusTable != "/profile/status.yaml" {
					t.Errorf("env not used: %+v", c)
				}
				topo := c.Topology()
				if topo.Type != queues.Quorum || topo.SingleActiveConsumer || topo.DeliveryLimit != 3 {
					t.Errorf("topology %+v", topo)
				}
			},
		},
		{
			name: "replica defaults", env: baseEnv,
			check: func(t *testing.T, c worker.Config) {
				if c.QueueType != "classic" || c.DisableSingleActiveConsumer || c.OpsAddr != ":9090" || c.WorkerID == "" {
					t.Errorf("defaults: %+v", c)
				}
			},
		},
		{
			name: "flag wins over env", args: []string{"-queue-type", "classic"},
			env: map[string]string{"VENDOR_URL": "https://a.test", "VENDOR_CLIENT_ID": "lab", "VENDOR_CLIENT_SECRET": "x", "QUEUE_TYPE": "quorum"},
			check: func(t *testing.T, c worker.Config) {
				if c.QueueType != "classic" {
					t.Errorf("queue type %q, want the flag's classic", c.QueueType)
				}
			},
		},
		{
			name: "vendor api shape from env (the sms profile)", env: map[string]string{
				"VENDOR_URL": "https://api.sms.test", "VENDOR_CLIENT_ID": "lab", "VENDOR_CLIENT_SECRET": "s3cr3t",
				"VENDOR_TOKEN_PATH": "/oauth2/token", "VENDOR_TOKEN_AUTH": "form", "VENDOR_SEND_PATH": "/sms/v2/messages",
				"VENDOR_REFKEY_FIELD": "client_ref", "VENDOR_CODE_FIELD": "result_code", "VENDOR_CORRELATION_HEADER": "X-Client-Ref",
			},
			check: func(t *testing.T, c worker.Config) {
				want := vendorapi.API{TokenPath: "/oauth2/token", TokenAuth: "form", SendPath: "/sms/v2/messages",
					RefKeyField: "client_ref", CodeField: "result_code"}
				if c.VendorAPI != want || c.CorrelationHeader != "X-Client-Ref" {
					t.Errorf("vendor api %+v, correlation header %q; want %+v, X-Client-Ref", c.VendorAPI, c.CorrelationHeader, want)
				}
			},
		},
		{
			name: "vendor api defaults: the alimtalk shape", env: baseEnv,
			check: func(t *testing.T, c worker.Config) {
				if c.VendorAPI != vendorapi.DefaultAPI() {
					t.Errorf("vendor api %+v; want %+v", c.VendorAPI, vendorapi.DefaultAPI())
				}
			},
		},
		{name: "vendor api flag wins over env", args: []string{"-vendor-token-auth", "basic"},
			env: map[string]string{"VENDOR_URL": "https://a.test", "VENDOR_CLIENT_ID": "lab", "VENDOR_CLIENT_SECRET": "x", "VENDOR_TOKEN_AUTH": "form"},
			check: func(t *testing.T, c worker.Config) {
				if c.VendorAPI.TokenAuth != "basic" {
					t.Errorf("token auth %q; want the flag's basic", c.VendorAPI.TokenAuth)
				}
			},
		},
		{name: "bad token auth names the known ones", env: map[string]string{"VENDOR_URL": "https://a.test", "VENDOR_CLIENT_ID": "lab",
			"VENDOR_CLIENT_SECRET": "x", "VENDOR_TOKEN_AUTH": "oauth2"}, wantErr: `token auth "oauth2": known: basic`},
		{name: "bad send path", args: []string{"-vendor-send-path", "sms/v2/messages"}, env: baseEnv, wantErr: `send path "sms/v2/messages": want an absolute path`},
		{name: "bad queue type", args: []string{"-queue-type", "stream"}, env: baseEnv, wantErr: "want classic or quorum"},
		{name: "bad env bool", env: map[string]string{"VENDOR_URL": "https://a.test", "VENDOR_CLIENT_ID": "lab", "VENDOR_CLIENT_SECRET": "x",
			"SINGLE_ACTIVE_CONSUMER": "maybe"}, wantErr: "SINGLE_ACTIVE_CONSUMER"},
		{name: "competing consumers on the default bbolt ledger refused", env: map[string]string{"VENDOR_URL": "https://a.test", "VENDOR_CLIENT_ID": "lab", "VENDOR_CLIENT_SECRET": "x",
			"SINGLE_ACTIVE_CONSUMER": "false"}, wantErr: "single active consumer off with the bbolt ledger"},
		{name: "no secret flag exists", args: []string{"-client-secret", "x"}, env: baseEnv, wantErr: "flag provided but not defined"},
		{name: "secret only from env", env: map[string]string{"VENDOR_URL": "https://a.test", "VENDOR_CLIENT_ID": "lab"}, wantErr: "VENDOR_CLIENT_SECRET"},
		{name: "unknown strategy lists known", args: []string{"-strategy", "turbo"}, env: baseEnv, wantErr: "known strategies: per-request, per-request-resume, pooled"},
		{name: "bad tls", args: []string{"-tls-max", "1.1"}, env: baseEnv, wantErr: "known versions: 1.2, 1.3"},
		{name: "bad clock start", args: []string{"-clock-start", "20:49"}, env: baseEnv, wantErr: "RFC 3339"},
		{name: "stray argument", args: []string{"extra"}, env: baseEnv, wantErr: "unexpected arguments"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseFlags(tc.args, envOf(tc.env), io.Discard)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, errUsage) {
					t.Fatalf("error %v, want usage error containing %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "s3cr3t") {
					t.Errorf("error prints the secret: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseFlags: %v", err)
			}
			tc.check(t, c)
		})
	}
}

func TestHelp(t *testing.T) {
	var out strings.Builder
	_, err := parseFlags([]string{"-h"}, envOf(nil), &out)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("err %v, want flag.ErrHelp", err)
	}
	for _, f := range []string{"-amqp-url", "-vendor-url", "-ca-file", "-client-id", "-strategy", "-tls-max", "-ledger",
		"-records", "-max-messages", "-window-start", "-clock-start", "VENDOR_CLIENT_SECRET"} {
		if !strings.Contains(out.String(), f) {
			t.Errorf("help lacks %s", f)
		}
	}
}

func TestExitCode(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, 0},
		{"config", fmt.Errorf("x: %w", worker.ErrConfig), 2},
		{"topology", fmt.Errorf("%w: %w", worker.ErrTopology, &queues.MismatchError{Queue: "q", Err: &amqp.Error{Code: 406}}), 3},
		{"other", errors.New("ledger"), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := exitCode(tt.err); got != tt.want {
				t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}
