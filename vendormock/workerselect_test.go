package vendormock

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestWorkerImage(t *testing.T) {
	images := map[string]string{EnvImageWorkerNode: "lab/node:1", EnvImageWorkerJava: "lab/java:1", EnvImageWorkerPython: "lab/python:1"}
	get := func(k string) string { return images[k] }
	tests := []struct {
		name, in, image, mode string
		contract              bool
	}{
		{"default is go", "", "", "", false},
		{"go", "go", "", "", false},
		{"node fetch", "node-fetch", "lab/node:1", "fetch", true},
		{"node without keep-alive", "node-agent-nokeepalive", "lab/node:1", "agent-nokeepalive", true},
		{"node keep-alive", "node-agent-keepalive", "lab/node:1", "agent-keepalive", true},
		{"java shared", "java-shared", "lab/java:1", "shared", true},
		{"java per send", "java-per-send", "lab/java:1", "per-send", true},
		{"java okhttp", "java-okhttp", "lab/java:1", "okhttp", true},
		{"java apache", "java-apache", "lab/java:1", "apache", true},
		{"node axios", "node-axios", "lab/node:1", "axios", true},
		{"node got", "node-got", "lab/node:1", "got", true},
		{"python requests.post", "python-requests", "lab/python:1", "requests", true},
		{"python requests.Session", "python-session", "lab/python:1", "session", true},
		{"python httpx.Client", "python-httpx", "lab/python:1", "httpx", true},
		{"python session fixed", "python-session-fixed", "lab/python:1", "session-fixed", true},
		{"python httpx fixed", "python-httpx-fixed", "lab/python:1", "httpx-fixed", true},
		{"java okhttp fixed", "java-okhttp-fixed", "lab/java:1", "okhttp-fixed", true},
		{"java apache fixed", "java-apache-fixed", "lab/java:1", "apache-fixed", true},
		{"node axios fixed", "node-axios-fixed", "lab/node:1", "axios-fixed", true},
		{"node got fixed", "node-got-fixed", "lab/node:1", "got-fixed", true},
		{"any image", "image:acme/worker:2", "acme/worker:2", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := WorkerImage(tt.in, get)
			if err != nil {
				t.Fatal(err)
			}
			if got.Image != tt.image || got.Contract != tt.contract || got.Env["CLIENT_MODE"] != tt.mode {
				t.Fatalf("WorkerImage(%q) = %+v; want image %q, contract %t, mode %q", tt.in, got, tt.image, tt.contract, tt.mode)
			}
		})
	}
}

// TestFixedIdleTimeout: a fixed variant gets CLIENT_IDLE_TIMEOUT_MS one
// margin below the keep-alive; its default (the negative control) gets
// none, so the worker keeps its library's default.
func TestFixedIdleTimeout(t *testing.T) {
	get := func(string) string { return "lab/x:1" }
	for _, tt := range []struct {
		worker, want string
	}{
		{"java-okhttp-fixed", "74000"}, {"node-got-fixed", "74000"}, {"python-session-fixed", "74000"},
		{"java-okhttp", ""}, {"node-agent-keepalive", ""},
	} {
		sel, err := WorkerImage(tt.worker, get)
		if err != nil {
			t.Fatal(err)
		}
		env := map[string]string{}
		d := sel.SetIdleTimeout(env, 75*time.Second)
		if got := env[EnvClientIdleTimeout]; got != tt.want || (tt.want == "") != (d == 0) {
			t.Errorf("%s: %s = %q (%s); want %q", tt.worker, EnvClientIdleTimeout, got, d, tt.want)
		}
	}
	if d := FixedIdleTimeout(5 * time.Second); d != 4*time.Second {
		t.Errorf("FixedIdleTimeout(5s) = %s; want 4s (the sms profile)", d)
	}
	if d := FixedIdleTimeout(500 * time.Millisecond); d != time.Millisecond {
		t.Errorf("FixedIdleTimeout(500ms) = %s; want the 1 ms floor", d)
	}
}

func TestWorkerImageErrors(t *testing.T) {
	tests := []struct {
		name, in string
		want     error
		says     string
	}{
		{"unknown name lists the known ones", "python", ErrUnknownWorker, "node-agent-nokeepalive"},
		{"image without a name", "image:", ErrUnknownWorker, "image:NAME"},
		{"reference image not built", "java-shared", ErrImagesMissing, EnvImageWorkerJava},
		{"python image not built", "python-httpx", ErrImagesMissing, EnvImageWorkerPython},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := WorkerImage(tt.in, func(string) string { return "" })
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("WorkerImage(%q) = %v; want %v naming %q", tt.in, err, tt.want, tt.says)
			}
		})
	}
}

// TestContractEnv checks every variable of docs/worker-contract.md is set
// from the stack and the profile, and the profile's API shape reaches the
// worker.
func TestContractEnv(t *testing.T) {
	for _, dir := range []string{DefaultProfileDir, "vendormock/profiles/sms"} {
		t.Run(dir, func(t *testing.T) {
			p, err := LoadProfile(dir)
			if err != nil {
				t.Fatal(err)
			}
			st := &Stack{AMQPURLNetwork: "amqp://guest:guest@rabbitmq:5672/", VendorURL: "https://" + p.Host, ClientID: "id", ClientSecret: "secret", Profile: p}
			env := ContractEnv(st, ContractOptions{RecordsPath: "/out/records.jsonl", LedgerPath: "/out/ledger.json", MaxMessages: 5,
				RetryDelay: 2 * time.Second, ClockStart: time.Date(2026, 11, 30, 11, 49, 50, 0, time.UTC)})
			want := map[string]string{
				"AMQP_URL": st.AMQPURLNetwork, "QUEUE": "notifications", "QUEUE_TYPE": "classic", "RETRY_DELAY_MS": "2000",
				"RETRY_MAX_DELAY_MS": "300000", "MAX_ATTEMPTS": "5", "VENDOR_URL": st.VendorURL, "VENDOR_CA_FILE": WorkerCAPath,
				"VENDOR_CLIENT_ID": "id", "VENDOR_CLIENT_SECRET": "secret", "VENDOR_TOKEN_PATH": p.API.TokenPath,
				"VENDOR_TOKEN_AUTH": p.API.tokenAuth(), "VENDOR_SEND_PATH": p.API.SendPath, "VENDOR_REFKEY_FIELD": p.API.RefKeyField,
				"VENDOR_CODE_FIELD": p.API.codeField(), "VENDOR_CORRELATION_HEADER": p.Client.CorrelationHeader,
				"RECORDS": "/out/records.jsonl", "LEDGER": "/out/ledger.json", "MAX_MESSAGES": "5",
				"CLOCK_START": "2026-11-30T11:49:50Z", EnvStatusTable: p.StatusTableJSON,
			}
			for k, v := range want {
				if env[k] != v {
					t.Errorf("%s = %q, want %q", k, env[k], v)
				}
			}
			if _, ok := env[EnvWorkerID]; ok {
				t.Error("WORKER_ID set without ContractOptions.WorkerID")
			}
			rep := ReplicaContractEnv(st, ContractOptions{})
			o := ReplicaOptions{Count: 1, OutDir: "x", Env: rep, Grace: time.Minute}
			if err := o.Validate(); err != nil {
				t.Errorf("ReplicaContractEnv is refused by ReplicaOptions.Validate: %v", err)
			}
		})
	}
}

// TestAPISpecWithDefaults checks the API shape the lab hands the Go
// worker (as worker.Config.VendorAPI): the sms profile's differs from
// alimtalk's in every value, and a profile that leaves the token
// authentication and the code field out gets "basic" and "code".
func TestAPISpecWithDefaults(t *testing.T) {
	cases := []struct {
		dir  string
		want APISpec
	}{
		{DefaultProfileDir, APISpec{TokenPath: "/v1/token", TokenAuth: "basic", SendPath: "/v3/message", RefKeyField: "refkey", CodeField: "code"}},
		{"vendormock/profiles/sms", APISpec{TokenPath: "/oauth2/token", TokenAuth: "form", SendPath: "/sms/v2/messages", RefKeyField: "client_ref", CodeField: "result_code"}},
	}
	for _, tc := range cases {
		t.Run(tc.dir, func(t *testing.T) {
			p, err := LoadProfile(tc.dir)
			if err != nil {
				t.Fatal(err)
			}
			got := p.API.WithDefaults()
			got.SuccessCode = "" // not part of the worker's API shape
			if got != tc.want {
				t.Errorf("API.WithDefaults() = %+v; want %+v", got, tc.want)
			}
		})
	}
	if got := (APISpec{TokenPath: "/t"}).WithDefaults(); got != (APISpec{TokenPath: "/t", TokenAuth: "basic", CodeField: "code"}) {
		t.Errorf("APISpec{TokenPath: /t}.WithDefaults() = %+v; want basic and code added", got)
	}
}
