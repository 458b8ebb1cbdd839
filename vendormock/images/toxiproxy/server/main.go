// Command server is the lab's Toxiproxy server: Toxiproxy's own server
// (same flags, API and logging as its cmd/server) with one extra toxic,
// handshake (package handshake), compiled in.
//
// Usage: server [-host 0.0.0.0] [-port 8474] [-config proxies.json]
// [-proxy-metrics] [-runtime-metrics] [-version]. LOG_LEVEL sets the log
// level (zerolog names: trace, debug, info, warn, error). SIGTERM exits 0.
package main

import (
	"flag"
	"fmt"
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
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM)
	go func() {
		<-signals
		os.Exit(0)
	}()
	run(parseFlags())
}

// run starts the API server; it blocks until the listener fails.
func run(o options) {
	if o.printVersion {
		fmt.Printf("toxiproxy-server version %s (notifier-lab build, toxics: +handshake)\n", toxiproxy.Version)
		return
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
	server.Listen(o.host, o.port)
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
