// Command server is the lab's Toxiproxy server: Toxiproxy's own server
// (same flags, API and logging as its cmd/server) with one extra toxic,
// handshake (package handshake), compiled in.
//
// Usage: server [-host 0.0.0.0] [-port 8474] [-config proxies.json]
// [-proxy-metrics] [-runtime-metrics] [-version]. LOG_LEVEL sets the log
// level (zerolog names: trace, debug, info, warn, error). SIGTERM or SIGINT
// shuts the API server down and exits 0; a listener that fails (port in
// use) exits 1.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/collectors"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/rs/zerolog/log"

	_ "github.com/notifier-lab/notifier-lab/vendormock/images/toxiproxy/server/handshake"
)

type options struct {
	host, port, config           string
	proxyMetrics, runtimeMetrics bool
	printVersion                 bool
}

func parseFlags() options {
	var o options
	flag.StringVar(&o.host, "host", "localhost", "Host for toxiproxy's API to listen on")
	flag.StringVar(&o.port, "port", "8474", "Port for toxiproxy's API to listen on")
	flag.StringVar(&o.config, "config", "", "JSON file containing proxies to create on startup")
	flag.BoolVar(&o.runtimeMetrics, "runtime-metrics", false, "enable runtime-related prometheus metrics")
	flag.BoolVar(&o.proxyMetrics, "proxy-metrics", false, "enable toxiproxy-specific prometheus metrics")
	flag.BoolVar(&o.printVersion, "version", false, "print the version")
	flag.Parse()
	return o
}

func main() {
	if err := run(parseFlags()); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

// run starts the API server and blocks until SIGTERM or SIGINT (then it
// shuts the server down and returns nil) or until the listener fails (its
// error), as Toxiproxy's own cmd/server since v2.6.0.
func run(o options) error {
	if o.printVersion {
		fmt.Printf("toxiproxy-server version %s (notifier-lab build, toxics: +handshake)\n", toxiproxy.Version)
		return nil
	}
	logger := newLogger()
	log.Logger = logger

	metrics := toxiproxy.NewMetricsContainer(prometheus.NewRegistry())
	server := toxiproxy.NewServer(metrics, logger)
	if o.proxyMetrics {
		server.Metrics.ProxyMetrics = collectors.NewProxyMetricCollectors()
	}
	if o.runtimeMetrics {
		server.Metrics.RuntimeMetrics = collectors.NewRuntimeMetricCollectors()
	}
	if o.config != "" {
		server.PopulateConfig(o.config)
	}

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	listened := make(chan error, 1)
	go func() { listened <- server.Listen(net.JoinHostPort(o.host, o.port)) }()
	select {
	case err := <-listened:
		if err == nil {
			return nil
		}
		return fmt.Errorf("listen on %s: %w", net.JoinHostPort(o.host, o.port), err)
	case <-signals:
		if err := server.Shutdown(); err != nil {
			logger.Err(err).Msg("shutdown finished with error")
		}
		return nil
	}
}

// newLogger is Toxiproxy's logger: JSON lines on stdout with UTC timestamps
// and short caller names, level from LOG_LEVEL.
func newLogger() zerolog.Logger {
	zerolog.TimestampFunc = func() time.Time { return time.Now().UTC() }
	zerolog.CallerMarshalFunc = func(_ uintptr, file string, line int) string {
		for i := len(file) - 1; i > 0; i-- {
			if file[i] == '/' {
				file = file[i+1:]
				break
			}
		}
		return file + ":" + strconv.Itoa(line)
	}
	logger := zerolog.New(os.Stdout).With().Caller().Timestamp().Logger()
	val, ok := os.LookupEnv("LOG_LEVEL")
	if !ok {
		return logger
	}
	lvl, err := zerolog.ParseLevel(val)
	if err != nil {
		logger.Err(err).Msgf("unknown LOG_LEVEL value: %q", val)
		return logger
	}
	return logger.Level(lvl)
}
