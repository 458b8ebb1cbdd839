package vendorapi

import (
	"crypto/tls"
	"strings"
	"testing"
	"time"
)

// TestConfigDefaults: every zero (or negative) timeout and size of a
// Config takes its documented default (DefaultDialTimeout and the rest,
// TLS 1.2 as the lowest version), and every value set is kept as given.
func TestConfigDefaults(t *testing.T) {
	got := Config{}.withDefaults()
	want := Config{
		DialTimeout: DefaultDialTimeout, TLSHandshakeTimeout: DefaultTLSHandshakeTimeout,
		ResponseTimeout: DefaultResponseTimeout, IdleConnTimeout: DefaultIdleConnTimeout,
		MaxIdleConnsPerHost: DefaultMaxIdleConnsPerHost, MinTLSVersion: DefaultMinTLSVersion,
	}
	check := func(what string, got, want Config) {
		t.Helper()
		if got.DialTimeout != want.DialTimeout || got.TLSHandshakeTimeout != want.TLSHandshakeTimeout ||
			got.ResponseTimeout != want.ResponseTimeout || got.IdleConnTimeout != want.IdleConnTimeout ||
			got.MaxIdleConnsPerHost != want.MaxIdleConnsPerHost || got.MinTLSVersion != want.MinTLSVersion {
			t.Errorf("%s: withDefaults gives dial %v, handshake %v, response %v, idle %v, idle conns %d, min TLS %x; want %v, %v, %v, %v, %d, %x",
				what, got.DialTimeout, got.TLSHandshakeTimeout, got.ResponseTimeout, got.IdleConnTimeout, got.MaxIdleConnsPerHost, got.MinTLSVersion,
				want.DialTimeout, want.TLSHandshakeTimeout, want.ResponseTimeout, want.IdleConnTimeout, want.MaxIdleConnsPerHost, want.MinTLSVersion)
		}
	}
	check("zero Config", got, want)
	check("negative values", Config{DialTimeout: -1, TLSHandshakeTimeout: -1, ResponseTimeout: -1, IdleConnTimeout: -1, MaxIdleConnsPerHost: -1}.withDefaults(), want)
	set := Config{
		DialTimeout: 1 * time.Second, TLSHandshakeTimeout: 2 * time.Second, ResponseTimeout: 4 * time.Second,
		IdleConnTimeout: 5 * time.Second, MaxIdleConnsPerHost: 7, MinTLSVersion: tls.VersionTLS13,
	}
	check("values set", set.withDefaults(), set)
}

// TestClientStringNamesStrategy: a Client prints its send URL and its
// strategy's name; a client without a strategy prints "<nil>".
func TestClientStringNamesStrategy(t *testing.T) {
	c := NewClient("https://"+vendorHost, testCreds, NewPooled(Config{}))
	defer c.Close()
	if s := c.String(); !strings.Contains(s, "strategy "+PooledName) || !strings.Contains(s, "https://"+vendorHost+MessagePath) {
		t.Errorf("String() = %q; want the send URL and strategy %s", s, PooledName)
	}
	if s := NewClient("https://"+vendorHost, testCreds, nil).String(); !strings.Contains(s, "strategy <nil>") {
		t.Errorf("String() of a client without a strategy = %q; want strategy <nil>", s)
	}
}
