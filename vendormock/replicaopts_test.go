package vendormock

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker"
)

// TestStopGrace: the budget is rounded up to Docker's whole seconds,
// never down (a SIGKILL sooner than the worker's budget could cut a send).
func TestStopGrace(t *testing.T) {
	for _, tc := range []struct{ in, want time.Duration }{
		{worker.ShutdownGrace(worker.Config{}), 55 * time.Second},
		{worker.ShutdownGrace(worker.Config{ResponseTimeout: 1250 * time.Millisecond, PublishTimeout: 1100 * time.Millisecond}), 12 * time.Second},
		{200 * time.Millisecond, time.Second},
	} {
		if got := stopGrace(tc.in); got != tc.want || got < tc.in {
			t.Errorf("stopGrace(%s) = %s; want %s", tc.in, got, tc.want)
		}
	}
}

func TestReplicaOptionsValidate(t *testing.T) {
	ok := ReplicaOptions{Count: 2, OutDir: "out", Grace: time.Minute}
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
		{"lab env", func(o *ReplicaOptions) { o.Env = map[string]string{EnvLedgerEphemeralOK: "1"} }, "env sets LEDGER_EPHEMERAL_OK"},
		{"no grace", func(o *ReplicaOptions) { o.Grace = 0 }, "grace 0s: want the worker's shutdown budget"},
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
	for _, want := range []string{"count", "ledger", "queue type", "out dir", "grace"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate of several problems: %v, want it to name %q", err, want)
		}
	}
}

func TestBuildReplica(t *testing.T) {
	st := stackEnv{amqpURL: "amqp://guest:guest@rabbitmq:5672/", vendorURL: "https://api.vendor.test", clientID: "lab-1", clientSecret: "s3"}
	t.Run("bbolt with single active consumer", func(t *testing.T) {
		var got ReplicaFiles
		args := func(f ReplicaFiles) []string { got = f; return []string{"A", f.RecordsPath, f.LedgerFile} }
		o := ReplicaOptions{Count: 1, OutDir: "out", Args: args, Env: map[string]string{"LOG_LEVEL": "debug"}}.withDefaults()
		sp := buildReplica(o, ReplicaID(2), st, "")
		if want := (ReplicaFiles{ID: "worker-2", RecordsPath: "/out/records-worker-2.jsonl", LedgerFile: "/ledger/ledger.db"}); got != want {
			t.Errorf("Args got files %+v, want %+v", got, want)
		}
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
		wantArgs := []string{"A", "/out/records-worker-2.jsonl", "/ledger/ledger.db"}
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
		var got ReplicaFiles
		o := ReplicaOptions{Count: 2, OutDir: "out", Ledger: LedgerPostgres, QueueType: QueueQuorum, NoSingleActiveConsumer: true,
			Args: func(f ReplicaFiles) []string { got = f; return nil }, CPUs: 1.5, Env: map[string]string{"AMQP_URL": "amqp://guest:guest@toxiproxy:5672/"}}.withDefaults()
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
		if got.LedgerFile != "" || got.RecordsPath != "/out/records-worker-1.jsonl" {
			t.Errorf("Args got files %+v for postgres: want no ledger file (the URL goes in the environment only)", got)
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
