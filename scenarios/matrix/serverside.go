package matrix

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/bench"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

// ErrorLogDir is the folder of OUT where each cell's slice of nginx's
// error log is kept (<cell>.log).
const ErrorLogDir = "nginx-error"

// wiremockPort is WireMock's port behind nginx: nginx's TIME_WAIT towards
// it is the upstream's.
const wiremockPort = 8080

// serverWatch is what the server side looked like when a cell started.
type serverWatch struct {
	errOffset      int64
	nginxID        string
	twStart, upTW0 int
	twOK           bool
}

// watchServer notes nginx's error log offset and TIME_WAIT counts before
// a cell. A TIME_WAIT count that cannot be read leaves the cell's nil.
func (m *matrixRun) watchServer(ctx context.Context) (serverWatch, error) {
	var w serverWatch
	off, err := m.stack.ErrorLogSize()
	if err != nil {
		return w, err
	}
	w.errOffset = off
	if id, err := m.stack.ServiceContainerID("nginx"); err == nil {
		w.nginxID = id
		w.twStart, w.upTW0, err = bench.CountTimeWaitOfContainer(ctx, id, wiremockPort)
		w.twOK = err == nil
	}
	return w, nil
}

// finishServer fills the cell's server-side evidence: nginx's error log
// slice since w (kept as OUT/nginx-error/<cell>.log, its TLS handshake
// errors counted), nginx's TIME_WAIT now against w's, and the upstream
// keep-alive setting.
func (m *matrixRun) finishServer(ctx context.Context, w serverWatch, c *results.MatrixCell) error {
	c.UpstreamKeepalive = m.upstreamKeepalive()
	raw, h, err := m.stack.ReadErrorLog(w.errOffset)
	if err != nil {
		return err
	}
	c.ServerHandshakeErrors = &h
	dir := filepath.Join(m.outDir, ErrorLogDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("keep error log: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, c.Name()+".log"), raw, 0o644); err != nil {
		return fmt.Errorf("keep error log: %w", err)
	}
	if w.twOK {
		if total, up, err := bench.CountTimeWaitOfContainer(ctx, w.nginxID, wiremockPort); err == nil {
			c.NginxTimeWait = &results.NginxTimeWait{ClientStart: w.twStart - w.upTW0, ClientEnd: total - up, UpstreamStart: w.upTW0, UpstreamEnd: up}
		}
	}
	return nil
}

// upstreamKeepalive is the run's UPSTREAM_KEEPALIVE, "on" unless off.
func (m *matrixRun) upstreamKeepalive() string {
	if m.cfg.UpstreamKeepalive == "off" {
		return "off"
	}
	return "on"
}

// sampleClientTimeWait samples the worker container id's TIME_WAIT every
// interval until the returned stop is called, which returns the counts
// (nil when the container's PID could not be read).
func sampleClientTimeWait(ctx context.Context, id string, interval time.Duration) (stop func() *results.TimeWait) {
	tw, tick := bench.SampleTimeWait(ctx, io.Discard, id)
	if tick == nil {
		return func() *results.TimeWait { return nil }
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			mu.Lock()
			tick()
			mu.Unlock()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() *results.TimeWait {
		close(done)
		wg.Wait()
		return tw
	}
}
