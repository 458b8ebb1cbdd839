package bench

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/notifier-lab/notifier-lab/vendormock"
)

// WorkerCPUInterval is how often the bench reads the worker container's
// cgroup CPU time while the worker runs.
const WorkerCPUInterval = 50 * time.Millisecond

// CPUSample is one reading of a container's CPU time (cgroup user+sys,
// ns) and when the host read it.
type CPUSample struct {
	t  time.Time
	ns int64
}

// WorkerCPU samples one worker container's cgroup CPU time every
// WorkerCPUInterval from its start until it exits (its cgroup folder goes
// with it) or Finish: the worker's CPU as the kernel counted it, whatever
// the worker reports of itself.
type WorkerCPU struct {
	mu      sync.Mutex
	samples []CPUSample
	err     error // why the first read failed; nil once one succeeded
	cancel  context.CancelFunc
	done    chan struct{}
}

// SampleWorkerCPU starts sampling container id's CPU time (cgroupHost).
func SampleWorkerCPU(ctx context.Context, id string) *WorkerCPU {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	w := &WorkerCPU{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		t := time.NewTicker(WorkerCPUInterval)
		defer t.Stop()
		for {
			ns, err := cgroupHost.CPUNanos(id)
			now := time.Now()
			w.mu.Lock()
			if err != nil {
				if len(w.samples) == 0 {
					w.err = err
				}
				w.mu.Unlock()
				return // the container is gone (or was never readable)
			}
			w.samples = append(w.samples, CPUSample{t: now, ns: ns})
			w.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return w
}

// Finish stops the sampler and returns its samples and, when it never
// read the CPU time, why. Safe on a nil sampler (no samples).
func (w *WorkerCPU) Finish() ([]CPUSample, error) {
	if w == nil {
		return nil, nil
	}
	w.cancel()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.samples, w.err
}

// CgroupCPUPerSend returns the worker container's CPU per measured send,
// ms: the CPU time between the end of the last warm-up send and the end
// of the last send nginx logged (both nginx's $msec, the send path's
// POSTs), linearly interpolated between samples, over the sends that
// ended in that window. The window ends at the last sample when the
// container exited before the last send's line was written, and the
// sends after it are not counted. -1 when the samples do not cover the
// window or no measured send falls in it (shown "not seen").
func CgroupCPUPerSend(samples []CPUSample, entries []vendormock.AccessEntry, sendPath string, warmup int) float64 {
	var ends []time.Time
	for _, e := range entries {
		if e.Method == "POST" && e.Path == sendPath && !e.Time.IsZero() {
			ends = append(ends, e.Time)
		}
	}
	if len(samples) < 2 || len(ends) < 2 {
		return -1
	}
	slices.SortFunc(ends, func(a, b time.Time) int { return a.Compare(b) })
	// Without warm-up the first send's end opens the window.
	from := max(warmup, 1) - 1
	if from >= len(ends)-1 {
		return -1
	}
	start, end := ends[from], ends[len(ends)-1]
	if last := samples[len(samples)-1].t; last.Before(end) {
		end = last
	}
	if start.Before(samples[0].t) || !end.After(start) {
		return -1
	}
	n := 0
	for _, t := range ends[from+1:] {
		if t.After(start) && !t.After(end) {
			n++
		}
	}
	if n == 0 {
		return -1
	}
	return (cpuAt(samples, end) - cpuAt(samples, start)) / 1e6 / float64(n)
}

// cpuAt is the CPU time at t, ns, interpolated between the samples around
// it (samples in time order, t within their span).
func cpuAt(samples []CPUSample, t time.Time) float64 {
	i, _ := slices.BinarySearchFunc(samples, t, func(s CPUSample, t time.Time) int { return s.t.Compare(t) })
	if i >= len(samples) {
		return float64(samples[len(samples)-1].ns)
	}
	if i == 0 || samples[i].t.Equal(t) {
		return float64(samples[i].ns)
	}
	a, b := samples[i-1], samples[i]
	f := float64(t.Sub(a.t)) / float64(b.t.Sub(a.t))
	return float64(a.ns) + f*float64(b.ns-a.ns)
}
