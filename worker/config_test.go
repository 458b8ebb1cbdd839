package worker

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/queues"
)

func validConfig() Config {
	return Config{
		VendorURL: "https://api.vendor.test", ClientID: "lab", ClientSecret: "s3cr3t-value",
	}.WithDefaults()
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		mod     func(*Config)
		wantErr []string // substrings; nil = valid
	}{
		{"defaults are valid", func(*Config) {}, nil},
		{"per-request with tls 1.2", func(c *Config) { c.Strategy, c.TLSMax = "per-request", "1.2" }, nil},
		{"unknown strategy names the known ones", func(c *Config) { c.Strategy = "fancy" },
			[]string{`strategy "fancy"`, "per-request", "pooled"}},
		{"plain http vendor (SCHEME=http)", func(c *Config) { c.VendorURL = "http://api.vendor.test" }, nil},
		{"ftp vendor", func(c *Config) { c.VendorURL = "ftp://api.vendor.test" }, []string{"want https"}},
		{"mtls with both files", func(c *Config) { c.ClientCertFile, c.ClientKeyFile = "c.pem", "k.pem" }, nil},
		{"client cert without key", func(c *Config) { c.ClientCertFile = "c.pem" }, []string{"give both or neither"}},
		{"client cert over plain http", func(c *Config) {
			c.VendorURL, c.ClientCertFile, c.ClientKeyFile = "http://api.vendor.test", "c.pem", "k.pem"
		}, []string{"mutual TLS needs https"}},
		{"http version 2", func(c *Config) { c.HTTPVersion = "2" }, nil},
		{"bad http version", func(c *Config) { c.HTTPVersion = "3" }, []string{`"3"`, "1.1, 2"}},
		{"concurrency 32", func(c *Config) { c.Concurrency = 32 }, nil},
		{"negative concurrency", func(c *Config) { c.Concurrency = -1 }, []string{"concurrency -1", "want 1..256"}},
		{"concurrency too high", func(c *Config) { c.Concurrency = 1000 }, []string{"concurrency 1000"}},
		{"negative pool size", func(c *Config) { c.PoolSize = -2 }, []string{"pool size -2"}},
		{"no vendor url", func(c *Config) { c.VendorURL = "" }, []string{"vendor url"}},
		{"no secret", func(c *Config) { c.ClientSecret = "" }, []string{"VENDOR_CLIENT_SECRET"}},
		{"no client id", func(c *Config) { c.ClientID = "" }, []string{"client id"}},
		{"bad tls", func(c *Config) { c.TLSMax = "1.4" }, []string{"1.4", "1.2, 1.3"}},
		{"bad log level", func(c *Config) { c.LogLevel = "loud" }, []string{"loud"}},
		{"bad amqp url", func(c *Config) { c.AMQPURL = "http://x" }, []string{"amqp url"}},
		{"zero attempts", func(c *Config) { c.MaxAttempts = -1 }, []string{"max attempts"}},
		{"negative max messages", func(c *Config) { c.MaxMessages = -1 }, []string{"max messages"}},
		{"fence not above the ledger timeout", func(c *Config) { c.LedgerTimeout, c.SendFence = 5*time.Second, 5*time.Second }, []string{"send fence 5s", "ledger timeout 5s"}},
		{"negative ledger timeout", func(c *Config) { c.LedgerTimeout = -time.Second }, []string{"ledger timeout -1s"}},
		{"longer fence and ledger timeout", func(c *Config) { c.LedgerTimeout, c.SendFence = 3*time.Second, 10*time.Second }, nil},
		{"competing consumers on bbolt refused", func(c *Config) { c.DisableSingleActiveConsumer = true },
			[]string{"single active consumer off with the bbolt ledger", "postgres://"}},
		{"competing consumers on postgres", func(c *Config) {
			c.DisableSingleActiveConsumer, c.LedgerPath = true, "postgres://lab@db:5432/ledger"
		}, nil},
		{"competing on bbolt for the negative control", func(c *Config) { c.DisableSingleActiveConsumer, c.CompetingLocalLedgerOK = true, true }, nil},
		{"paced", func(c *Config) { c.SendInterval = 40 * time.Millisecond }, nil},
		{"negative send interval", func(c *Config) { c.SendInterval = -time.Millisecond }, []string{"send interval -1ms"}},
		{"two problems at once", func(c *Config) { c.ClientID, c.TLSMax = "", "9" }, []string{"client id", "tls max"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := validConfig()
			tc.mod(&c)
			err := c.Validate()
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("Validate: %v, want ErrConfig", err)
			}
			for _, s := range tc.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
		})
	}
}

func TestPoolSize(t *testing.T) {
	tests := []struct {
		name                    string
		concurrency, pool, want int
	}{
		{"default: one idle connection", 0, 0, 1},
		{"sized from concurrency", 8, 0, 8},
		{"POOL_SIZE overrides (Go's default 2)", 8, 2, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := PoolSize(Config{Concurrency: tc.concurrency, PoolSize: tc.pool}); got != tc.want {
				t.Errorf("PoolSize = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestConfigStringRedacts(t *testing.T) {
	c := validConfig()
	c.AMQPURL = "amqp://user:brokerpass@rabbit:5672/"
	for _, s := range []string{c.String(), fmt.Sprint(c.LogValue())} {
		if strings.Contains(s, "s3cr3t-value") || strings.Contains(s, "brokerpass") {
			t.Errorf("secret printed: %s", s)
		}
	}
}

func TestRedact(t *testing.T) {
	tests := []struct {
		in, recipient string
		mustNot       []string
		must          []string
	}{
		{"post to +821000005678 failed", "+821000005678", []string{"+821000005678", "10000"}, []string{"5678"}},
		{"bad phone 010-0000-5678 in body", "", []string{"010-0000"}, []string{"5678"}},
		{"Authorization: Bearer abc.def-ghi rejected", "", []string{"abc.def-ghi"}, []string{"Bearer <redacted>"}},
		{`{"accesstoken":"tok123","type":"Bearer"}`, "", []string{"tok123"}, []string{"<redacted>"}},
		{"client_secret=hunter2&x=1", "", []string{"hunter2"}, []string{"<redacted>"}},
		{"dial tcp 127.0.0.1:8443: connection refused", "", nil, []string{"127.0.0.1:8443"}},
		{strings.Repeat("x", 2000), "", nil, []string{"..."}},
	}
	for _, tc := range tests {
		got := Redact(tc.in, tc.recipient)
		for _, s := range tc.mustNot {
			if strings.Contains(got, s) {
				t.Errorf("Redact(%q) = %q still contains %q", tc.in, got, s)
			}
		}
		for _, s := range tc.must {
			if !strings.Contains(got, s) {
				t.Errorf("Redact(%q) = %q lacks %q", tc.in, got, s)
			}
		}
		if len(got) > MaxErrorText+3 {
			t.Errorf("Redact: %d bytes, want <= %d", len(got), MaxErrorText+3)
		}
	}
}

func TestNewVendorClientErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.pem")
	if err := os.WriteFile(empty, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		mod     func(*Config)
		wantErr string
	}{
		{"missing ca file", func(c *Config) { c.CAFile = filepath.Join(dir, "nope.pem") }, "read ca file"},
		{"ca file without PEM", func(c *Config) { c.CAFile = empty }, "no PEM certificate"},
		{"unknown strategy", func(c *Config) { c.Strategy = "fancy" }, "known strategies"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := validConfig()
			tc.mod(&c)
			cl, err := NewVendorClient(c)
			if err == nil {
				_ = cl.Close()
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q, want %q", err, tc.wantErr)
			}
		})
	}
	for _, s := range StrategyNames() {
		c := validConfig()
		c.Strategy = s
		cl, err := NewVendorClient(c)
		if err != nil {
			t.Fatalf("strategy %s: %v", s, err)
		}
		if err := cl.Close(); err != nil {
			t.Errorf("close %s: %v", s, err)
		}
	}
}

// TestTopologyDeadLetterStrategy: -dead-letter-at-most-once reaches the
// declared quorum queues (no x-dead-letter-strategy on any of them); by
// default every quorum queue with a dead-letter hop is at-least-once.
func TestTopologyDeadLetterStrategy(t *testing.T) {
	for _, amo := range []bool{false, true} {
		c := Config{QueueType: "quorum", DeadLetterAtMostOnce: amo}.WithDefaults()
		hops := 0
		for _, q := range c.Topology().Queues() {
			if _, ok := q.Args[queues.ArgDeadLetterRoutingKey]; !ok {
				continue
			}
			hops++
			got, ok := q.Args[queues.ArgDeadLetterStrategy]
			if amo && ok {
				t.Errorf("at most once: %s declares %s=%v", q.Name, queues.ArgDeadLetterStrategy, got)
			}
			if !amo && got != queues.DeadLetterAtLeastOnce {
				t.Errorf("default: %s declares %s=%v, want %s", q.Name, queues.ArgDeadLetterStrategy, got, queues.DeadLetterAtLeastOnce)
			}
		}
		if hops < 3 {
			t.Errorf("at most once %t: %d queues dead-letter, want at least the 3 hops", amo, hops)
		}
	}
}
