package vendormock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

// ErrNoReplica is returned (wrapped with the id) for a replica id a
// Workers does not have.
var ErrNoReplica = errors.New("no such replica")

// opsTimeout bounds one /metrics or /healthz request from the host.
const opsTimeout = 5 * time.Second

// Workers is a set of worker replicas consuming one queue, started by
// StartReplicas. Its methods are safe for concurrent use.
type Workers struct {
	s        *Stack
	o        ReplicaOptions // after withDefaults
	outDir   string         // absolute
	grace    time.Duration
	pgURL    string // LedgerPostgres: URL on the run's network
	mu       sync.Mutex
	replicas []*Replica
}

// Replica is one worker container of a Workers, known by its ID
// ("worker-1"). Recreate replaces its container; the other methods act on
// the current one.
type Replica struct {
	ID     string
	set    *Workers
	volume string // LedgerBbolt: its ledger volume
	mu     sync.Mutex
	w      *Worker
	gen    int // containers started so far
}

// StartReplicas starts o.Count worker replicas (ReplicaID 1..Count), one
// after another, each with o.CPUs CPUs, its records file in o.OutDir and,
// for LedgerBbolt, a fresh named volume at WorkerLedgerDir; for
// LedgerPostgres it first starts PostgreSQL (StartPostgres) and every
// replica gets its URL in LEDGER. It does not wait for the replicas to
// consume (watch their records, logs or Healthz). Stack.Close (or
// Workers.Close) removes the containers and the volumes. Errors:
// ErrReplicaOptions, ErrNoWorkerImage, StartPostgres's, Docker errors;
// replicas already started stay (Close removes them).
func (s *Stack) StartReplicas(ctx context.Context, o ReplicaOptions) (*Workers, error) {
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("start replicas: %w", err)
	}
	if s.imageWorker == "" && o.Image == "" {
		return nil, ErrNoWorkerImage
	}
	o = o.withDefaults()
	w := &Workers{s: s, o: o}
	var err error
	if w.outDir, err = filepath.Abs(o.OutDir); err != nil {
		return nil, fmt.Errorf("start replicas: %w", err)
	}
	if err := os.MkdirAll(w.outDir, 0o755); err != nil {
		return nil, fmt.Errorf("start replicas: %w", err)
	}
	w.grace = stopGrace(o.Grace)
	if o.Ledger == LedgerPostgres {
		pg, err := s.StartPostgres(ctx, o.PostgresImage)
		if err != nil {
			return nil, fmt.Errorf("start replicas: %w", err)
		}
		w.pgURL = pg.URLNetwork
		if o.PostgresAddr != "" {
			w.pgURL = pg.URLVia(o.PostgresAddr)
		}
	}
	for range o.Count {
		if _, err := w.Add(ctx); err != nil {
			return w, err
		}
	}
	s.logf("%d worker replicas (%s ledger, %s queues, single active consumer %t, shutdown grace %s)",
		o.Count, o.Ledger, o.QueueType, !o.NoSingleActiveConsumer, w.grace)
	return w, nil
}

// Grace returns the SIGTERM grace period Stop gives a replica
// (ReplicaOptions.Grace rounded up to whole seconds).
func (w *Workers) Grace() time.Duration { return w.grace }

// Replicas returns the replicas in the order they were started.
func (w *Workers) Replicas() []*Replica {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]*Replica(nil), w.replicas...)
}

// Replica returns the replica with this id. Errors: ErrNoReplica.
func (w *Workers) Replica(id string) (*Replica, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range w.replicas {
		if r.ID == id {
			return r, nil
		}
	}
	return nil, fmt.Errorf("replica %q: %w (have %d)", id, ErrNoReplica, len(w.replicas))
}

// Add starts one more replica, ReplicaID(n+1) for n replicas so far (a
// rolling deploy's new pod), with the set's options and, for LedgerBbolt, a
// fresh volume. Errors: Docker errors.
func (w *Workers) Add(ctx context.Context) (*Replica, error) {
	w.mu.Lock()
	r := &Replica{ID: ReplicaID(len(w.replicas) + 1), set: w}
	w.replicas = append(w.replicas, r)
	w.mu.Unlock()
	if w.o.Ledger == LedgerBbolt {
		r.volume = w.s.containerName(w.prefix() + "ledger-" + r.ID)
		if err := w.s.createVolume(ctx, r.volume); err != nil {
			return r, fmt.Errorf("start replica %s: %w", r.ID, err)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r, r.start(ctx)
}

// prefix is the set's name part of container and volume names.
func (w *Workers) prefix() string {
	if w.o.Name == "" {
		return ""
	}
	return w.o.Name + "-"
}

// Close removes every replica's container and volume; Stack.Close does it
// too. The records files stay. Errors of each removal are joined.
func (w *Workers) Close(ctx context.Context) error {
	var errs []error
	for _, r := range w.Replicas() {
		r.mu.Lock()
		if r.w != nil {
			errs = append(errs, r.w.Stop(ctx, 0))
		}
		if r.volume != "" {
			errs = append(errs, w.s.removeVolume(ctx, r.volume))
		}
		r.mu.Unlock()
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close replicas: %w", err)
	}
	return nil
}

// start starts the replica's next container; r.mu is held.
func (r *Replica) start(ctx context.Context) error {
	w := r.set
	s := w.s
	spec := buildReplica(w.o, r.ID, stackEnv{
		amqpURL: s.AMQPURLsNetwork, vendorURL: s.VendorURL,
		clientID: s.ClientID, clientSecret: s.ClientSecret,
		statusTable: s.Profile.StatusTableJSON, vendorAPI: s.Profile.VendorAPIEnv(),
	}, w.pgURL)
	var mounts []mount.Mount
	if r.volume != "" {
		mounts = append(mounts, mount.Mount{Type: mount.TypeVolume, Source: r.volume, Target: WorkerLedgerDir})
	}
	r.gen++
	name := w.prefix() + r.ID
	if r.gen > 1 {
		name += "-" + strconv.Itoa(r.gen)
	}
	ops := strconv.Itoa(WorkerOpsPort) + "/tcp"
	wk, err := s.startWorkerContainer(ctx, name, testcontainers.ContainerRequest{
		Image:        w.o.Image,
		Cmd:          spec.args,
		Env:          s.transportEnv(spec.env),
		ExposedPorts: []string{ops},
		// The ops port on 127.0.0.1 only (testcontainers-go v0.45 refuses
		// the "127.0.0.1::port" form in ExposedPorts).
		HostConfigModifier: PublishOnLoopback([]string{ops}, func(hc *container.HostConfig) {
			hc.NanoCPUs = int64(w.o.CPUs * 1e9)
			hc.Binds = append(hc.Binds, s.CAFile+":"+WorkerCAPath+":ro", w.outDir+":"+WorkerOutDir)
			hc.Binds = append(hc.Binds, s.clientCertBinds()...)
			hc.Mounts = append(hc.Mounts, mounts...)
		}),
	})
	if wk != nil {
		r.w = wk
	}
	if err != nil {
		return fmt.Errorf("start replica %s: %w", r.ID, err)
	}
	s.logf("replica %s started as %s (%g CPU, %s ledger)", r.ID, name, w.o.CPUs, w.o.Ledger)
	return nil
}

// current returns the replica's container.
func (r *Replica) current() (*Worker, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w == nil {
		return nil, fmt.Errorf("replica %s: no container", r.ID)
	}
	return r.w, nil
}

// Stop sends SIGTERM and waits up to Workers.Grace for the worker to finish
// its in-flight message and exit, then SIGKILLs it (docker stop -t). The
// container stays (Logs, Wait still work) until Recreate or Close. Errors:
// ctx done, Docker errors.
func (r *Replica) Stop(ctx context.Context) error {
	wk, err := r.current()
	if err != nil {
		return err
	}
	g := r.set.grace
	if err := wk.c.Stop(ctx, &g); err != nil {
		return fmt.Errorf("stop replica %s: %w", r.ID, err)
	}
	r.set.s.logf("replica %s stopped (SIGTERM, grace %s)", r.ID, g)
	return nil
}

// Kill sends SIGKILL at once (docker kill -s KILL): no in-flight message is
// finished, no ledger entry closed. It returns once the container has
// exited. The container stays until Recreate or Close. Errors: the replica
// is not running, ctx done, Docker errors.
func (r *Replica) Kill(ctx context.Context) error {
	wk, err := r.current()
	if err != nil {
		return err
	}
	cli, err := r.set.s.dockerClient(ctx)
	if err != nil {
		return fmt.Errorf("kill replica %s: %w", r.ID, err)
	}
	if _, err := cli.ContainerKill(ctx, wk.ContainerID(), client.ContainerKillOptions{Signal: "KILL"}); err != nil {
		return fmt.Errorf("kill replica %s: %w", r.ID, err)
	}
	if _, err := wk.Wait(ctx); err != nil {
		return fmt.Errorf("kill replica %s: %w", r.ID, err)
	}
	r.set.s.logf("replica %s killed (SIGKILL)", r.ID)
	return nil
}

// Recreate removes the replica's container (SIGKILL if it still runs) and
// starts a new one with the same ID, options and records file. keepLedger
// false replaces a bbolt replica's volume with a fresh empty one (a lost
// disk); with LedgerPostgres the shared database is always kept. Errors:
// Docker errors.
func (r *Replica) Recreate(ctx context.Context, keepLedger bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.set.s
	if r.w != nil {
		st, err := r.w.c.State(ctx)
		if err == nil && st.Running {
			cli, cerr := s.dockerClient(ctx)
			if cerr == nil {
				_, cerr = cli.ContainerKill(ctx, r.w.ContainerID(), client.ContainerKillOptions{Signal: "KILL"})
			}
			if cerr != nil {
				return fmt.Errorf("recreate replica %s: kill: %w", r.ID, cerr)
			}
		}
		if err := r.w.Stop(ctx, 0); err != nil {
			return fmt.Errorf("recreate replica %s: %w", r.ID, err)
		}
		r.w = nil
	}
	if !keepLedger && r.volume != "" {
		if err := s.removeVolume(ctx, r.volume); err != nil {
			return fmt.Errorf("recreate replica %s: %w", r.ID, err)
		}
		if err := s.createVolume(ctx, r.volume); err != nil {
			return fmt.Errorf("recreate replica %s: %w", r.ID, err)
		}
	}
	s.logf("replica %s recreated (ledger kept: %t)", r.ID, keepLedger || r.volume == "")
	return r.start(ctx)
}

// Wait waits for the replica's container to exit and returns its exit code
// (137 after a SIGKILL). Errors: ctx done first, Docker errors.
func (r *Replica) Wait(ctx context.Context) (int, error) {
	wk, err := r.current()
	if err != nil {
		return -1, err
	}
	return wk.Wait(ctx)
}

// Logs returns the current container's stdout and stderr (the worker's
// JSON log lines); a recreated replica's earlier logs are gone.
func (r *Replica) Logs(ctx context.Context) (string, error) {
	wk, err := r.current()
	if err != nil {
		return "", err
	}
	return wk.Logs(ctx)
}

// RecordsPath returns the host path of the replica's records file
// (records.ReadFile or records.Tail read it). It outlives Recreate: a new
// container appends to it.
func (r *Replica) RecordsPath() string {
	return filepath.Join(r.set.outDir, RecordsFileName(r.ID))
}

// ContainerID returns the current container's Docker id.
func (r *Replica) ContainerID() string {
	wk, err := r.current()
	if err != nil {
		return ""
	}
	return wk.ContainerID()
}

// Metrics returns the replica's /metrics (Prometheus text format) from the
// host. Errors: the replica is not running, the request fails, a status
// other than 200.
func (r *Replica) Metrics(ctx context.Context) (string, error) {
	code, body, err := r.ops(ctx, "/metrics")
	if err != nil {
		return "", err
	}
	if code != http.StatusOK {
		return body, fmt.Errorf("metrics of replica %s: status %d", r.ID, code)
	}
	return body, nil
}

// Healthz returns the status code and body of the replica's /healthz: 200
// while it is ready (active, or standby under single active consumer, as
// the body says), 503 when its broker channel or its ledger does not
// answer. Errors: the replica is not running, the request fails.
func (r *Replica) Healthz(ctx context.Context) (int, string, error) {
	return r.ops(ctx, "/healthz")
}

// ops GETs path on the replica's published ops port.
func (r *Replica) ops(ctx context.Context, path string) (int, string, error) {
	wk, err := r.current()
	if err != nil {
		return 0, "", err
	}
	addr, err := hostAddr(ctx, wk.c, strconv.Itoa(WorkerOpsPort)+"/tcp")
	if err != nil {
		return 0, "", fmt.Errorf("%s of replica %s: %w", path, r.ID, err)
	}
	ctx, cancel := context.WithTimeout(ctx, opsTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return 0, "", fmt.Errorf("%s of replica %s: %w", path, r.ID, err)
	}
	resp, err := r.set.s.adminHTTP.Do(req)
	if err != nil {
		return 0, "", fmt.Errorf("%s of replica %s: %w", path, r.ID, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, string(b), fmt.Errorf("%s of replica %s: %w", path, r.ID, err)
	}
	return resp.StatusCode, string(b), nil
}
