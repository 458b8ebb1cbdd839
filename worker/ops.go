package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Pinger is a ledger that can say whether it answers (a database round
// trip, an open file). A ledger without Ping is taken to answer while the
// worker runs.
type Pinger interface {
	Ping(ctx context.Context) error
}

// health is what /healthz reports, set by the consume loop.
type health struct {
	// broker: a broker session (connection and channels) is open.
	broker atomic.Bool
	// active: this session received a delivery. With single active
	// consumer RabbitMQ delivers nothing to a standby replica, so the
	// first delivery is how a replica learns it is the active one; an
	// active replica on an empty queue also reports standby until its
	// first delivery (AMQP 0-9-1 tells a consumer nothing else).
	active atomic.Bool
}

// State is "active" or "standby".
func (h *health) State() string {
	if h.active.Load() {
		return "active"
	}
	return "standby"
}

// healthPingTimeout bounds the ledger's Ping in /healthz.
const healthPingTimeout = time.Second

// opsHandler serves:
//
//	GET /healthz  200 "active" or "standby" while the broker session is
//	              open and the ledger answers; 503 with the reason otherwise
//	GET /metrics  the Prometheus text format of m's registry
func opsHandler(h *health, led any, m *Metrics) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if !h.broker.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "not ready: broker session not open")
			return
		}
		if p, ok := led.(Pinger); ok {
			ctx, cancel := context.WithTimeout(r.Context(), healthPingTimeout)
			err := p.Ping(ctx)
			cancel()
			if err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				fmt.Fprintln(w, "not ready: ledger does not answer:", Redact(err.Error(), ""))
				return
			}
		}
		fmt.Fprintln(w, h.State())
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{}))
	return mux
}

// opsServer serves opsHandler on addr until stop is called. Errors: addr
// cannot be listened on.
func startOps(addr string, h http.Handler, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen ops %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("ops server stopped", "error", err.Error())
		}
	}()
	log.Info("serving /healthz and /metrics", "addr", ln.Addr().String())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	}, nil
}
