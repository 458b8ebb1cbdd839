package scale

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/notifier-lab/notifier-lab/vendormock"
)

// Container is one container of the stack as the sampler names it.
type Container struct {
	ID   string
	Name string // the container's name without the stack's "lab-<run id>-" prefix
}

// Role is what a container is: one of vendormock.Services (a broker
// node "rabbitmq-N" is "rabbitmq"), or "worker" (a replica or the direct
// driver's container).
func (c Container) Role() string {
	for _, s := range vendormock.Services {
		if c.Name == s || strings.HasPrefix(c.Name, s+"-") && s == vendormock.AliasRabbitMQ {
			return s
		}
	}
	return RoleWorker
}

// RoleWorker is the role of the worker containers.
const RoleWorker = "worker"

// Sample is one reading of one container: when, its CPU time so far (ns)
// and, for a worker, its processes' RSS (bytes; 0 for the others).
type Sample struct {
	At       time.Time
	CPUNanos int64
	RSSBytes int64
}

// Sampler reads every container of one stack every Interval: the CPU time
// of each from its cgroup, the RSS of the workers' processes. Containers
// come and go (a point's workers); each keeps its samples. Start it
// before a point, Stop it after: the samples stay in Series.
type Sampler struct {
	Interval time.Duration
	list     func(context.Context) ([]Container, error)
	fs       cgroupFS

	mu     sync.Mutex
	names  map[string]string // id -> name
	series map[string][]Sample
	host   []HostSample
	errs   []string
	stop   context.CancelFunc
	done   chan struct{}
}

// NewSampler samples the containers of stack (its run label) from the
// host's cgroups every interval.
func NewSampler(stack *vendormock.Stack, interval time.Duration) *Sampler {
	return &Sampler{Interval: interval, list: dockerLister(vendormock.LabelRun, stack.RunID, "lab-"+stack.RunID+"-"), fs: hostCgroups}
}

// dockerLister lists the running containers whose label key is value,
// their names without prefix.
func dockerLister(key, value, prefix string) func(context.Context) ([]Container, error) {
	return func(ctx context.Context) ([]Container, error) {
		cli, err := testcontainers.NewDockerClientWithOpts(ctx)
		if err != nil {
			return nil, fmt.Errorf("list containers: %w", err)
		}
		defer cli.Close()
		res, err := cli.ContainerList(ctx, client.ContainerListOptions{Filters: make(client.Filters).Add("label", key+"="+value)})
		if err != nil {
			return nil, fmt.Errorf("list containers: %w", err)
		}
		var out []Container
		for _, c := range res.Items {
			name := c.ID
			if len(c.Names) > 0 {
				name = strings.TrimPrefix(strings.TrimPrefix(c.Names[0], "/"), prefix)
			}
			out = append(out, Container{ID: c.ID, Name: name})
		}
		return out, nil
	}
}

// Start begins sampling in the background (one reading at once).
func (s *Sampler) Start(ctx context.Context) {
	s.names, s.series, s.host, s.errs = map[string]string{}, map[string][]Sample{}, nil, nil
	ctx, s.stop = context.WithCancel(ctx)
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		t := time.NewTicker(s.Interval)
		defer t.Stop()
		for {
			s.read(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

// Stop ends sampling after one last reading and returns the series.
func (s *Sampler) Stop(ctx context.Context) Series {
	s.stop()
	<-s.done
	s.read(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	return Series{Names: s.names, Samples: s.series, Host: s.host, Errors: s.errs}
}

// read takes one reading of every container; errors are kept (the first
// few) and sampling goes on.
func (s *Sampler) read(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	cs, err := s.list(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	keep := func(err error) {
		if len(s.errs) < 5 && !slices.Contains(s.errs, err.Error()) {
			s.errs = append(s.errs, err.Error())
		}
	}
	if err != nil {
		keep(err)
		return
	}
	now := time.Now()
	if busy, total, err := s.fs.HostTicks(); err == nil {
		s.host = append(s.host, HostSample{At: now, Busy: busy, Total: total})
	} else {
		keep(err)
	}
	for _, c := range cs {
		cpu, err := s.fs.CPUNanos(c.ID)
		if errors.Is(err, ErrNoCgroup) && len(s.series[c.ID]) > 0 {
			continue // it exited between the list and the read
		}
		if err != nil {
			keep(err)
			continue
		}
		smp := Sample{At: now, CPUNanos: cpu}
		if c.Role() == RoleWorker {
			if smp.RSSBytes, err = s.fs.RSSBytes(c.ID); err != nil {
				keep(err)
			}
		}
		s.names[c.ID] = c.Name
		s.series[c.ID] = append(s.series[c.ID], smp)
	}
}

// HostSample is one reading of the host's CPU time since boot, clock
// ticks: busy (all but idle and iowait) and total.
type HostSample struct {
	At          time.Time
	Busy, Total int64
}

// Series are a sampler's readings: per container id its name and samples
// in time order, the host's, and the first errors met.
type Series struct {
	Names   map[string]string
	Samples map[string][]Sample
	Host    []HostSample
	Errors  []string
}

// HostBusy is the host's busy share of its CPU time between from and to
// (its first and last sample inside), 0..1; 0 without two samples.
func (s Series) HostBusy(from, to time.Time) float64 {
	var in []HostSample
	for _, h := range s.Host {
		if !h.At.Before(from) && !h.At.After(to) {
			in = append(in, h)
		}
	}
	if len(in) < 2 || in[len(in)-1].Total <= in[0].Total {
		return 0
	}
	return float64(in[len(in)-1].Busy-in[0].Busy) / float64(in[len(in)-1].Total-in[0].Total)
}
