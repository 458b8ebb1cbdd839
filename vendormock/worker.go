package vendormock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/testcontainers/testcontainers-go"
	tcexec "github.com/testcontainers/testcontainers-go/exec"
)

// Paths inside a worker container.
const (
	WorkerCAPath = "/lab/ca.pem" // the run's CA certificate (read-only)
	// WorkerClientCertPath and WorkerClientKeyPath are the worker's client
	// certificate and key under SchemeMTLS (read-only).
	WorkerClientCertPath = "/lab/client.pem"
	WorkerClientKeyPath  = "/lab/client.key"
	WorkerOutDir         = "/out" // WorkerOptions.OutDir (read-write)
)

// ErrNoWorkerImage is returned by StartWorker when Options.Images.Worker
// was empty.
var ErrNoWorkerImage = errors.New("no worker image: set LAB_IMAGE_WORKER (./run.sh builds it)")

// WorkerOptions start the worker binary in a container on the stack's network.
type WorkerOptions struct {
	Name   string            // container name suffix, e.g. "pooled-10ms"
	Args   []string          // the command line (the Go worker's: worker.Config.Args)
	Env    map[string]string // e.g. GOMAXPROCS
	CPUs   float64           // CPU limit (NanoCPUs); 1 in the lab
	OutDir string            // host dir bind-mounted at /out (records, ledger)
	// ReadOnly are extra host files bind-mounted read-only: host path ->
	// container path (e.g. a delivery-report secret outside OutDir).
	ReadOnly map[string]string
	// PublishOps publishes the worker's ops port (WorkerOpsPort) on
	// 127.0.0.1, for OpsURL (e.g. the report relay's pushes).
	PublishOps bool
	// Image is the worker under test's image (WorkerSelection.Image); "" =
	// the stack's Go worker image (Images.Worker).
	Image string
	// Grace is how long Stop lets the worker finish after SIGTERM at
	// least: its own shutdown budget (for the Go worker worker.ShutdownGrace
	// of its config, docs/deployment.md), rounded up to whole seconds.
	// Required (> 0).
	Grace time.Duration
}

// Worker is a running worker container.
type Worker struct {
	c        testcontainers.Container
	name     string
	stopOnce sync.Once
	stopErr  error
	// grace is the worker's own shutdown budget (WorkerOptions.Grace,
	// rounded up); Stop never kills it sooner.
	grace time.Duration
}

var workerNameRE = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]*$`)

// StartWorker starts the worker image with the CA file at /lab/ca.pem.
// The container runs Images.Worker's entrypoint with Cmd = o.Args and
// Env = o.Env on the stack's network (so it reaches VendorURL and
// AMQPURLNetwork by alias), limited to o.CPUs CPUs (HostConfig.NanoCPUs;
// 0 = no limit), with o.OutDir (created) bind-mounted read-write at /out.
// It does not wait for anything: the worker's own exit or Stop ends it.
// Close also removes it. Errors: ErrNoWorkerImage, a bad name, Docker errors.
func (s *Stack) StartWorker(ctx context.Context, o WorkerOptions) (*Worker, error) {
	if s.imageWorker == "" && o.Image == "" {
		return nil, ErrNoWorkerImage
	}
	if !workerNameRE.MatchString(o.Name) {
		return nil, fmt.Errorf("start worker: name %q: letters, digits, '_', '.', '-' only", o.Name)
	}
	if o.CPUs < 0 {
		return nil, fmt.Errorf("start worker: negative CPUs %g", o.CPUs)
	}
	if o.Grace <= 0 {
		return nil, fmt.Errorf("start worker: grace %v: want the worker's shutdown budget (worker.ShutdownGrace), > 0", o.Grace)
	}
	binds := append([]string{s.CAFile + ":" + WorkerCAPath + ":ro"}, s.clientCertBinds()...)
	env := s.transportEnv(o.Env)
	if o.OutDir != "" {
		out, err := filepath.Abs(o.OutDir)
		if err != nil {
			return nil, fmt.Errorf("start worker: %w", err)
		}
		if err := os.MkdirAll(out, 0o755); err != nil {
			return nil, fmt.Errorf("start worker: %w", err)
		}
		binds = append(binds, out+":"+WorkerOutDir)
	}
	for host, in := range o.ReadOnly {
		binds = append(binds, host+":"+in+":ro")
	}
	modify := func(hc *container.HostConfig) {
		hc.NanoCPUs = int64(o.CPUs * 1e9)
		hc.Binds = append(hc.Binds, binds...)
	}
	var exposed []string
	if o.PublishOps {
		exposed = []string{strconv.Itoa(WorkerOpsPort) + "/tcp"}
		modify = PublishOnLoopback(exposed, modify)
	}
	wk, err := s.startWorkerContainer(ctx, WorkerAlias(o.Name), testcontainers.ContainerRequest{
		Image:              o.Image,
		Cmd:                o.Args,
		Env:                env,
		ExposedPorts:       exposed,
		HostConfigModifier: modify,
	})
	if err != nil {
		return nil, fmt.Errorf("start worker %s: %w", o.Name, err)
	}
	wk.grace = stopGrace(o.Grace)
	s.logf("worker %s started (%g CPU, shutdown grace %s)", o.Name, o.CPUs, wk.grace)
	return wk, nil
}

// clientCertBinds are the bind mounts of the worker's client certificate
// and key under SchemeMTLS (read-only); none otherwise.
func (s *Stack) clientCertBinds() []string {
	if s.ClientCertFile == "" {
		return nil
	}
	return []string{
		s.ClientCertFile + ":" + WorkerClientCertPath + ":ro",
		s.ClientKeyFile + ":" + WorkerClientKeyPath + ":ro",
	}
}

// transportEnv returns env (not modified) with the worker settings of the
// stack's transport added where env does not set them: CLIENT_CERT_FILE
// and CLIENT_KEY_FILE under SchemeMTLS, HTTP_VERSION=2 when nginx offers
// h2. The worker flags of the same names win over these.
func (s *Stack) transportEnv(env map[string]string) map[string]string {
	out := make(map[string]string, len(env)+3)
	if s.ClientCertFile != "" {
		out["CLIENT_CERT_FILE"] = WorkerClientCertPath
		out["CLIENT_KEY_FILE"] = WorkerClientKeyPath
	}
	if s.HTTP2 {
		out["HTTP_VERSION"] = "2"
	}
	maps.Copy(out, env)
	return out
}

// containerName returns the Docker name of this run's object name:
// "lab-<RunID>-<name>".
func (s *Stack) containerName(name string) string {
	return fmt.Sprintf("lab-%s-%s", s.RunID, name)
}

// startWorkerContainer starts req with its Image ("" = the Go worker image), the stack's
// labels, network and the alias name, and records it for Close. It returns
// the container also when it started but failed afterwards.
func (s *Stack) startWorkerContainer(ctx context.Context, name string, req testcontainers.ContainerRequest) (*Worker, error) {
	if req.Image == "" {
		req.Image = s.imageWorker
	}
	req.Name = s.containerName(name)
	req.Labels = s.labels()
	req.Networks = []string{s.nw.Name}
	req.NetworkAliases = map[string][]string{s.nw.Name: {name}}
	c, err := StartContainer(ctx, req)
	if c == nil || isNilContainer(c) {
		return nil, err
	}
	w := &Worker{c: c, name: name}
	s.mu.Lock()
	s.workers = append(s.workers, w)
	s.mu.Unlock()
	return w, err
}

// Wait waits for the worker to exit and returns its exit code. Errors: ctx
// done first (the worker keeps running), Docker errors.
func (w *Worker) Wait(ctx context.Context) (int, error) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		st, err := w.c.State(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return -1, fmt.Errorf("wait worker %s: %w", w.name, ctx.Err())
			}
			return -1, fmt.Errorf("wait worker %s: %w", w.name, err)
		}
		if !st.Running && st.Status != "created" {
			return st.ExitCode, nil
		}
		select {
		case <-ctx.Done():
			return -1, fmt.Errorf("wait worker %s: %w", w.name, ctx.Err())
		case <-tick.C:
		}
	}
}

// Stop sends SIGTERM, waits up to timeout (never less than the worker's
// own shutdown budget, WorkerOptions.Grace: a SIGKILL sooner could
// cut a send between the request and its ledger record), then kills;
// removes the container. Safe to call twice (the second call returns the
// first's result). Read Logs before Stop: they go with the container.
func (w *Worker) Stop(ctx context.Context, timeout time.Duration) error {
	timeout = max(timeout, w.grace)
	w.stopOnce.Do(func() {
		if err := testcontainers.TerminateContainer(w.c, testcontainers.StopContext(ctx), testcontainers.StopTimeout(timeout)); err != nil {
			w.stopErr = fmt.Errorf("stop worker %s: %w", w.name, err)
		}
	})
	return w.stopErr
}

// Logs returns the worker's stdout and stderr so far.
func (w *Worker) Logs(ctx context.Context) (string, error) {
	rc, err := w.c.Logs(ctx)
	if err != nil {
		return "", fmt.Errorf("logs of worker %s: %w", w.name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return string(b), fmt.Errorf("logs of worker %s: %w", w.name, err)
	}
	return string(b), nil
}

// ContainerID returns the worker container's Docker id (for docker stats
// or cgroup CPU accounting).
func (w *Worker) ContainerID() string { return w.c.GetContainerID() }

// OpsURL returns "http://127.0.0.1:<port>" of the worker's ops server
// (WorkerOptions.PublishOps). Errors: the port is not published.
func (w *Worker) OpsURL(ctx context.Context) (string, error) {
	addr, err := hostAddr(ctx, w.c, strconv.Itoa(WorkerOpsPort)+"/tcp")
	if err != nil {
		return "", fmt.Errorf("ops url: %w", err)
	}
	return "http://" + addr, nil
}

// Exec runs cmd inside the worker's container with env ("NAME=value")
// added to its environment, waits for it and returns its exit code and
// its standard output and error, interleaved as written. It is how a
// container that idles (the client-defaults container runs sleep) runs one
// client after another. Errors: Docker errors, ctx done, output unread.
func (w *Worker) Exec(ctx context.Context, cmd, env []string) (int, string, error) {
	code, r, err := w.c.Exec(ctx, cmd, tcexec.Multiplexed(), tcexec.WithEnv(env))
	if err != nil {
		return code, "", fmt.Errorf("exec in worker %s: %w", w.name, err)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return code, string(b), fmt.Errorf("exec in worker %s: read output: %w", w.name, err)
	}
	return code, string(b), nil
}
