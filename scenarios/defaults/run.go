package defaults

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/scenarios/internal/outdir"
	"github.com/notifier-lab/notifier-lab/scenarios/report"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// Defaults of ./run.sh client-defaults (study B: 200 sequential calls at
// 50 ms RTT for the client defaults; 10 in flight for the first wave).
const (
	DefaultRTTMS        = 50
	DefaultCalls        = 200
	DefaultWaveCalls    = 50
	DefaultWaveInFlight = 10
	// DefaultOut is the committed run's folder; without OUT the command
	// writes a new folder under results/runs/.
	DefaultOut = "results/client-defaults"
	// MaxCalls bounds CALLS: 2,000 new connections at 380 ms RTT is
	// about 40 minutes already.
	MaxCalls = 2000
	// MaxRTTMS bounds RTT as the bench does.
	MaxRTTMS = 1000
)

// Files Run writes in Out.
const (
	ResultFile  = "client-defaults.json"
	SummaryFile = "summary.md"
	ChartFile   = "charts/median-per-call.svg"
)

// EnvImageClients names the client-defaults image's variable in
// .lab/images.env (vendormock/images/clients.sh writes it).
const EnvImageClients = "LAB_IMAGE_CLIENTS"

// Config is one run of the client-defaults experiment.
type Config struct {
	RTTMS        int      // round trip Toxiproxy adds, ms (the TCP handshake toxic is on)
	Calls        int      // sequential calls per client
	WaveCalls    int      // calls of the first-wave table
	WaveInFlight int      // calls in flight in the first-wave table
	Clients      []string // names of Sequential and Wave to run; nil = all
	Out          string
	Images       vendormock.Images
	ClientsImage string // LAB_IMAGE_CLIENTS
	Session      string // vendormock.Options.Session
	Provenance   *results.Provenance
}

// DefaultConfig is study B's set-up: 200 sequential calls at 50 ms RTT,
// then 50 calls 10 in flight.
func DefaultConfig() Config {
	return Config{RTTMS: DefaultRTTMS, Calls: DefaultCalls, WaveCalls: DefaultWaveCalls, WaveInFlight: DefaultWaveInFlight, Out: DefaultOut}
}

// Row is one client's measurement.
type Row struct {
	Client
	Calls    int     `json:"calls"`
	InFlight int     `json:"in_flight"`
	Count    Count   `json:"nginx"`
	MedianMS float64 `json:"median_ms"` // of the client's per-call times
	P90MS    float64 `json:"p90_ms"`
	Output
}

// Result is the file client-defaults.json.
type Result struct {
	Provenance   *results.Provenance `json:"provenance"`
	Date         string              `json:"date"`
	RTTMS        int                 `json:"rtt_ms"`
	TCPHandshake bool                `json:"tcp_handshake"` // Toxiproxy's handshake toxic: a new connection costs its TCP round trip
	Calls        int                 `json:"calls"`
	WaveCalls    int                 `json:"wave_calls"`
	WaveInFlight int                 `json:"wave_in_flight"`
	// Server side: nginx keepalive_timeout (s), TLS versions offered, the
	// vendor's think time (0: an answer at once, as in study B).
	KeepaliveTimeoutS float64 `json:"keepalive_timeout_s"`
	TLSOffered        string  `json:"tls_offered"`
	ServerDelayMS     int     `json:"server_delay_ms"`
	ClientsImage      string  `json:"clients_image"`
	ClientCPUs        float64 `json:"client_cpus"`
	Sequential        []Row   `json:"sequential"`
	Wave              []Row   `json:"wave"`
}

// selected returns the clients of list that cfg runs.
func (cfg Config) selected(list []Client) []Client {
	if cfg.Clients == nil {
		return list
	}
	var out []Client
	for _, c := range list {
		if slices.Contains(cfg.Clients, c.Name) {
			out = append(out, c)
		}
	}
	return out
}

// clientCPUs is the client container's CPU limit, as the worker's.
const clientCPUs = 1

// Run starts the vendor stack, sets the RTT with the TCP handshake toxic,
// runs every selected client in one client container and writes Out's
// client-defaults.json, summary.md and chart. A client whose calls fail
// is a row with its errors, not a reason to stop; a client that prints no
// result, or a stack that does not start, stops the run. Containers are
// removed on return.
func Run(ctx context.Context, cfg Config, w io.Writer) (err error) {
	if err := cfg.Images.Validate(); err != nil {
		return fmt.Errorf("read images: %w", err)
	}
	if cfg.ClientsImage == "" {
		return fmt.Errorf("read images: %s is empty: run vendormock/images/ensure-images.sh (LAB_IMAGES=offline builds the Debian base it needs)", EnvImageClients)
	}
	out, err := filepath.Abs(cfg.Out)
	if err != nil {
		return fmt.Errorf("resolve OUT: %w", err)
	}
	runID := time.Now().UTC().Format("20060102T150405Z")
	if cfg.Provenance != nil && cfg.Provenance.RunID != "" {
		runID = cfg.Provenance.RunID
	}
	if err := outdir.Claim(out, runID); err != nil {
		return err
	}
	root := lab.RepoRoot()
	workDir := filepath.Join(root, ".lab", "runs", "client-defaults-"+runID)
	goclient := filepath.Join(workDir, "goclient")
	if err := buildGoClient(ctx, root, goclient); err != nil {
		return err
	}
	report.Logf(w, "client-defaults %s: RTT %d ms (TCP handshake toxic on), %d sequential calls per client, %d calls %d in flight; work dir %s",
		runID, cfg.RTTMS, cfg.Calls, cfg.WaveCalls, cfg.WaveInFlight, workDir)
	stack, err := vendormock.Start(ctx, vendormock.Options{
		ProfileDir: filepath.Join(root, vendormock.DefaultProfileDir), ServerDelayMS: 0,
		Scheme: vendormock.SchemeHTTPS, HTTPVersion: "1.1", Images: cfg.Images, Session: cfg.Session,
		WorkDir: filepath.Join(workDir, "stack"), Log: lab.PrefixWriter{W: io.Discard},
	})
	if err != nil {
		return fmt.Errorf("start stack: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		if cerr := stack.Close(cctx); cerr != nil {
			err = errors.Join(err, fmt.Errorf("close stack: %w", cerr))
		}
	}()
	report.Logf(w, "stack ready in %.1f s", stack.StartDuration.Seconds())
	if err := stack.SetRTT(ctx, cfg.RTTMS, vendormock.WithTCPHandshake(true)); err != nil {
		return err
	}
	if _, err := stack.SelfCheck(ctx, cfg.RTTMS); err != nil {
		return fmt.Errorf("self-check: %w", err)
	}
	token, err := fetchToken(ctx, stack)
	if err != nil {
		return err
	}
	ct, err := stack.StartWorker(ctx, vendormock.WorkerOptions{
		Name: "clients", Image: cfg.ClientsImage, Args: []string{"sleep", "infinity"}, CPUs: clientCPUs, Grace: time.Second,
		ReadOnly: map[string]string{filepath.Join(root, "scenarios", "defaults", "clients"): ScriptsDir, goclient: GoClient},
	})
	if err != nil {
		return fmt.Errorf("start client container: %w", err)
	}
	defer func() { _ = ct.Stop(context.WithoutCancel(ctx), time.Second) }()

	res := Result{Provenance: cfg.Provenance, Date: time.Now().UTC().Format(time.RFC3339), RTTMS: cfg.RTTMS, TCPHandshake: true,
		Calls: cfg.Calls, WaveCalls: cfg.WaveCalls, WaveInFlight: cfg.WaveInFlight, KeepaliveTimeoutS: stack.KeepaliveTimeout.Seconds(),
		TLSOffered: vendormock.NewNginxConfig(stack.Profile, stack.KeepaliveTimeout).SSLProtocols, ServerDelayMS: stack.ServerDelayMS,
		ClientsImage: cfg.ClientsImage, ClientCPUs: clientCPUs}
	env := []string{"URL=" + stack.VendorURL + stack.Profile.API.SendPath, "TOKEN=" + token,
		"NODE_EXTRA_CA_CERTS=" + vendormock.WorkerCAPath, "REQUESTS_CA_BUNDLE=" + vendormock.WorkerCAPath, "SSL_CERT_FILE=" + vendormock.WorkerCAPath}
	seq, wave := cfg.selected(Sequential), cfg.selected(Wave)
	total, done, start := len(seq)+len(wave), 0, time.Now()
	runOne := func(c Client, calls, inflight int) (Row, error) {
		e := append(slices.Clone(env), "PREFIX="+c.Name, fmt.Sprintf("CALLS=%d", calls), fmt.Sprintf("INFLIGHT=%d", inflight))
		ectx, cancel := context.WithTimeout(ctx, callBudget(cfg.RTTMS, calls))
		defer cancel()
		code, outText, err := ct.Exec(ectx, c.Argv, e)
		if err != nil {
			return Row{}, fmt.Errorf("run client %s: %w", c.Name, err)
		}
		o, perr := ParseOutput(outText)
		if code != 0 || perr != nil {
			return Row{}, fmt.Errorf("run client %s: exit %d: %w; output: %s", c.Name, code, perr, lab.LastLines(outText, 5))
		}
		r := Row{Client: c, Calls: calls, InFlight: inflight, Output: o}
		r.MedianMS, r.P90MS = quantiles(o.MS)
		done++
		el := time.Since(start)
		report.Logf(w, "client %d/%d %-28s median %7.1f ms/call  wall %6.1f s  errors %d; elapsed %s, ETA %s", done, total, c.Name,
			r.MedianMS, o.WallMS/1000, o.Errors, el.Round(time.Second), (el / time.Duration(done) * time.Duration(total-done)).Round(time.Second))
		return r, nil
	}
	for _, c := range seq {
		r, err := runOne(c, cfg.Calls, 1)
		if err != nil {
			return err
		}
		res.Sequential = append(res.Sequential, r)
	}
	for _, c := range wave {
		r, err := runOne(c, cfg.WaveCalls, cfg.WaveInFlight)
		if err != nil {
			return err
		}
		res.Wave = append(res.Wave, r)
	}
	entries, _, err := stack.ReadAccessLog(0)
	if err != nil {
		return fmt.Errorf("read access log: %w", err)
	}
	for _, rows := range [][]Row{res.Sequential, res.Wave} {
		for i := range rows {
			rows[i].Count = CountCalls(entries, rows[i].Name)
		}
	}
	if err := WriteResult(out, res); err != nil {
		return err
	}
	report.Logf(w, "wrote %s, %s and %s", filepath.Join(cfg.Out, ResultFile), filepath.Join(cfg.Out, SummaryFile), filepath.Join(cfg.Out, ChartFile))
	return nil
}

// callBudget bounds one client's run: every call on a new connection
// (three round trips) plus a second per call of slack.
func callBudget(rttMS, calls int) time.Duration {
	return time.Minute + time.Duration(calls)*(3*time.Duration(rttMS)*time.Millisecond+time.Second)
}

// buildGoClient builds ./scenarios/defaults/cmd/goclient static (CGO off) to
// path, so it runs in the client container whatever its libc.
func buildGoClient(ctx context.Context, root, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("build goclient: %w", err)
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", path, "./scenarios/defaults/cmd/goclient")
	cmd.Dir = root
	cmd.Env = append(cmd.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build goclient: %w: %s", err, b)
	}
	return nil
}

// fetchToken gets a Bearer token once, from the host through Toxiproxy,
// for every client's calls.
func fetchToken(ctx context.Context, st *vendormock.Stack) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, st.VendorURL+st.Profile.API.TokenPath, nil)
	if err != nil {
		return "", fmt.Errorf("fetch token: %w", err)
	}
	req.SetBasicAuth(st.ClientID, st.ClientSecret)
	resp, err := st.HostClient().Do(req)
	if err != nil {
		return "", fmt.Errorf("fetch token: %w", err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"accesstoken"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || resp.StatusCode != http.StatusOK || tok.AccessToken == "" {
		return "", fmt.Errorf("fetch token: status %d: %v", resp.StatusCode, err)
	}
	return tok.AccessToken, nil
}

// quantiles returns the median and p90 of ms, -1 each for none.
func quantiles(ms []float64) (p50, p90 float64) {
	s := slices.Clone(ms)
	slices.Sort(s)
	if len(s) == 0 {
		return -1, -1 // JSON has no NaN; the row's errors say why
	}
	return results.Percentile(s, 0.5), results.Percentile(s, 0.9)
}
