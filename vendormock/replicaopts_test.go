package vendormock

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker"
)

func TestShutdownGrace(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want time.Duration
	}{
		{"worker defaults", nil, 55 * time.Second},
		{"flag and value", []string{"-response-timeout", "3s", "-publish-timeout", "5s"}, 22 * time.Second},
		{"equals form", []string{"--response-timeout=3s", "-publish-timeout=5s"}, 22 * time.Second},
		{"last one wins", []string{"-response-timeout", "1s", "-response-timeout", "4s"}, 31 * time.Second},
		{"rounded up to seconds", []string{"-response-timeout", "1250ms", "-publish-timeout", "1100ms"}, 12 * time.Second},
		{"other flags ignored", []string{"-strategy", "pooled", "-queue", "q"}, 55 * time.Second},
		{"after -- ignored", []string{"--", "-response-timeout", "1s"}, 55 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ShutdownGrace(tc.args)
			if err != nil || got != tc.want {
				t.Fatalf("ShutdownGrace(%q) = %s, %v; want %s", tc.args, got, err, tc.want)
			}
		})
	}
}

func TestShutdownGraceBadValue(t *testing.T) {
	for _, args := range [][]string{
		{"-response-timeout", "soon"},
		{"-publish-timeout"},
		{"-publish-timeout=-1s"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			_, err := ShutdownGrace(args)
			if err == nil || !strings.Contains(err.Error(), "want a positive duration") {
				t.Fatalf("ShutdownGrace(%q) err %v, want one naming a positive duration", args, err)
			}
		})
	}
}

// The grace falls back to the worker's own defaults: if they change, the
// budget must follow.
func TestShutdownGraceDefaultsMatchWorker(t *testing.T) {
	if workerDefaultResponseTimeout != worker.DefaultResponseTimeout || workerDefaultPublishTimeout != worker.DefaultPublishTimeout {
		t.Fatalf("grace defaults %s/%s, worker's %s/%s", workerDefaultResponseTimeout, workerDefaultPublishTimeout,
			worker.DefaultResponseTimeout, worker.DefaultPublishTimeout)
	}
}

// The lab never waits less than the worker's own budget before SIGKILL.
func TestShutdownGraceAtLeastWorkers(t *testing.T) {
	for _, tc := range []struct {
		resp, pub time.Duration
		n         int
	}{
		{0, 0, 0}, {3 * time.Second, 5 * time.Second, 0}, {1250 * time.Millisecond, 1100 * time.Millisecond, 0},
		{0, 0, 8}, {2 * time.Second, time.Second, 32},
	} {
		var args []string
		if tc.resp > 0 {
			args = append(args, "-response-timeout", tc.resp.String(), "-publish-timeout", tc.pub.String())
		}
		if tc.n > 0 {
			args = append(args, "-concurrency", strconv.Itoa(tc.n))
		}
		got, err := ShutdownGrace(args)
		want := worker.ShutdownGrace(worker.Config{ResponseTimeout: tc.resp, PublishTimeout: tc.pub, Concurrency: tc.n})
		if err != nil || got < want {
			t.Errorf("ShutdownGrace(%q) = %s, %v; the worker needs %s", args, got, err, want)
		}
	}
}

func TestReplicaOptionsValidate(t *testing.T) {
	ok := ReplicaOptions{Count: 2, OutDir: "out"}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid options: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(*ReplicaOptions)
		want string
	}{
		{"no replica", func(o *ReplicaOptions) { o.Count = 0 }, "count 0: want >= 1"},
		{"unknown ledger", func(o *ReplicaOptions) { o.Ledger = "sqlite" }, `ledger "sqlite": known ledgers: bbolt, postgres`},
		{"unknown queue type", func(o *ReplicaOptions) { o.QueueType = "stream" }, `queue type "stream": known types: classic, quorum`},
		{"negative cpus", func(o *ReplicaOptions) { o.CPUs = -1 }, "cpus -1"},
		{"no out dir", func(o *ReplicaOptions) { o.OutDir = "" }, "out dir: empty"},
		{"bad name", func(o *ReplicaOptions) { o.Name = "a b" }, `name "a b"`},
		{"records flag", func(o *ReplicaOptions) { o.Args = []string{"-records", "/out/x"} }, "args set -records"},
		{"ledger flag", func(o *ReplicaOptions) { o.Args = []string{"--ledger=/x"} }, "args set -ledger"},
		{"lab env", func(o *ReplicaOptions) { o.Env = map[string]string{EnvLedgerEphemeralOK: "1"} }, "env sets LEDGER_EPHEMERAL_OK"},
		{"bad timeout", func(o *ReplicaOptions) { o.Args = []string{"-response-timeout", "x"} }, "-response-timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := ok
			tc.edit(&o)
			err := o.Validate()
			if !errors.Is(err, ErrReplicaOptions) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate: %v, want ErrReplicaOptions naming %q", err, tc.want)
			}
		})
	}
	// Every problem is reported at once.
	err := ReplicaOptions{Ledger: "x", QueueType: "y"}.Validate()
	for _, want := range []string{"count", "ledger", "queue type", "out dir"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate of several problems: %v, want it to name %q", err, want)
		}
	}
}

func TestBuildReplica(t *testing.T) {
	st := stackEnv{amqpURL: "amqp://guest:guest@rabbitmq:5672/", vendorURL: "https://api.vendor.test", clientID: "lab-1", clientSecret: "s3"}
	t.Run("bbolt with single active consumer", func(t *testing.T) {
		o := ReplicaOptions{Count: 1, OutDir: "out", Args: []string{"-strategy", "pooled"}, Env: map[string]string{"LOG_LEVEL": "debug"}}.withDefaults()
		sp := buildReplica(o, ReplicaID(2), st, "")
		want := map[string]string{
			EnvWorkerID: "worker-2", EnvLedger: "/ledger/ledger.db", EnvQueueType: "classic",
			EnvSingleActiveConsumer: "true", EnvOpsAddr: ":9090", "GOMAXPROCS": "1",
			"AMQP_URL": st.amqpURL, "VENDOR_URL": st.vendorURL, "VENDOR_CA_FILE": WorkerCAPath,
			"VENDOR_CLIENT_ID": "lab-1", "VENDOR_CLIENT_SECRET": "s3", "LOG_LEVEL": "debug",
		}
		for k, v := range want {
			if sp.env[k] != v {
				t.Errorf("env %s = %q, want %q", k, sp.env[k], v)
			}
		}
		if _, ok := sp.env[EnvLedgerEphemeralOK]; ok {
			t.Errorf("env sets %s; the lab mounts a volume instead", EnvLedgerEphemeralOK)
		}
		wantArgs := []string{"-strategy", "pooled", "-records", "/out/records-worker-2.jsonl", "-ledger", "/ledger/ledger.db"}
		if !slices.Equal(sp.args, wantArgs) {
			t.Errorf("args %q, want %q", sp.args, wantArgs)
		}
	})
	t.Run("the profile's vendor API reaches every replica", func(t *testing.T) {
		api := map[string]string{"VENDOR_TOKEN_AUTH": "form", "VENDOR_REFKEY_FIELD": "client_ref", "VENDOR_CORRELATION_HEADER": "X-Client-Ref"}
		st := st
		st.vendorAPI = api
		sp := buildReplica(ReplicaOptions{Count: 1, OutDir: "out"}.withDefaults(), ReplicaID(1), st, "")
		for k, v := range api {
			if sp.env[k] != v {
				t.Errorf("env %s = %q, want %q", k, sp.env[k], v)
			}
		}
		over := ReplicaOptions{Count: 1, OutDir: "out", Env: map[string]string{"VENDOR_TOKEN_AUTH": "basic"}}.withDefaults()
		if got := buildReplica(over, ReplicaID(1), st, "").env["VENDOR_TOKEN_AUTH"]; got != "basic" {
			t.Errorf("ReplicaOptions.Env VENDOR_TOKEN_AUTH = %q; want it to win over the profile's (basic)", got)
		}
	})
	t.Run("postgres quorum negative control", func(t *testing.T) {
		o := ReplicaOptions{Count: 2, OutDir: "out", Ledger: LedgerPostgres, QueueType: QueueQuorum, NoSingleActiveConsumer: true,
			CPUs: 1.5, Env: map[string]string{"AMQP_URL": "amqp://guest:guest@toxiproxy:5672/"}}.withDefaults()
		const pg = "postgres://lab:pw@postgres:5432/ledger?sslmode=disable"
		sp := buildReplica(o, ReplicaID(1), st, pg)
		for k, v := range map[string]string{
			EnvLedger: pg, EnvQueueType: "quorum", EnvSingleActiveConsumer: "false", "GOMAXPROCS": "2",
			"AMQP_URL": "amqp://guest:guest@toxiproxy:5672/",
		} {
			if sp.env[k] != v {
				t.Errorf("env %s = %q, want %q", k, sp.env[k], v)
			}
		}
		if _, ok := flagValue(sp.args, "ledger"); ok {
			t.Errorf("args %q set -ledger for postgres: the URL goes in the environment only", sp.args)
		}
	})
}

func TestNames(t *testing.T) {
	if got := ReplicaID(3); got != "worker-3" {
		t.Errorf("ReplicaID(3) = %q", got)
	}
	if got := RecordsFileName("worker-3"); got != "records-worker-3.jsonl" {
		t.Errorf("RecordsFileName = %q", got)
	}
	s := &Stack{RunID: "ab12"}
	if got := s.containerName("x-ledger-worker-1"); got != "lab-ab12-x-ledger-worker-1" {
		t.Errorf("containerName = %q", got)
	}
}

func TestPostgresStringRedacts(t *testing.T) {
	p := &Postgres{Image: "postgres:16", URLNetwork: "postgres://lab:secretpw@postgres:5432/ledger", URLHost: "postgres://lab:secretpw@127.0.0.1:1/ledger"}
	if s := p.String(); strings.Contains(s, "secretpw") || !strings.Contains(s, "postgres:5432") {
		t.Fatalf("String() = %q: want the address without the password", s)
	}
}
