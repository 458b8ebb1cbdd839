package worker

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"slices"

	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// StrategyNames returns the names of vendorapi.Strategies(), sorted.
func StrategyNames() []string {
	var names []string
	for name := range vendorapi.Strategies() {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// ParseTLSVersion maps "1.2" and "1.3" to tls.VersionTLS12 and
// tls.VersionTLS13. Other values are an error naming the known ones.
func ParseTLSVersion(s string) (uint16, error) {
	switch s {
	case "1.2":
		return tls.VersionTLS12, nil
	case "1.3":
		return tls.VersionTLS13, nil
	}
	return 0, fmt.Errorf("unknown TLS version %q: known versions: 1.2, 1.3", s)
}

// ParseHTTPVersion maps "1.1" and "2" to the vendorapi HTTP version; other
// values are an error naming the known ones.
func ParseHTTPVersion(s string) (vendorapi.HTTPVersion, error) {
	switch s {
	case "1.1":
		return vendorapi.HTTP1, nil
	case "2":
		return vendorapi.HTTP2, nil
	}
	return 0, fmt.Errorf("unknown HTTP version %q: known versions: 1.1, 2", s)
}

// ParseLogLevel maps debug, info, warn and error to slog levels.
func ParseLogLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("unknown log level %q: known levels: debug, info, warn, error", s)
	}
	return l, nil
}
