package worker

import (
	"flag"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// notOnCommandLine are the Config fields with no flag: the secret (the
// environment only) and what the command never sets.
var notOnCommandLine = []string{"ClientSecret", "ReconnectMin", "Heartbeat", "Logger"}

// fullConfig has every field set, each to a value other than the
// command's default.
func fullConfig() Config {
	return Config{
		AMQPURL: "amqp://u:p@rabbit:5673/v", Queue: "q.main", RetryDelay: 7 * time.Second, MaxAttempts: 9,
		RetryMaxDelay: 3 * time.Minute, QueueType: "quorum", DeliveryLimit: 4, DisableSingleActiveConsumer: true, CompetingLocalLedgerOK: true, DeadLetterAtMostOnce: true,
		WorkerID: "w-7", OpsAddr: "127.0.0.1:9999", VendorStatusTable: `{"statuses":{}}`,
		VendorReports: `{"pull":{"path":"/r/{refkey}"}}`, ReportSecretFile: "/run/secrets/report", ReportJournal: "/data/reports.jsonl", ReportSweep: 7 * time.Second,
		VendorURL: "https://api.vendor.test:8443", VendorAddr: "10.0.0.1:443",
		VendorAPI: vendorapi.API{TokenPath: "/oauth2/token", TokenAuth: "form", SendPath: "/sms/v2/messages",
			RefKeyField: "client_ref", CodeField: "result_code"},
		CAFile: "/lab/ca.pem", ClientID: "lab", ClientSecret: "s3cr3t", Strategy: "per-request", TLSMax: "1.2",
		IdleConnTimeout: 73990 * time.Millisecond, ResponseTimeout: 2500 * time.Millisecond, DialTimeout: 3500 * time.Millisecond,
		TLSHandshakeTimeout: 4 * time.Second, ClientCertFile: "/lab/client.pem", ClientKeyFile: "/lab/client.key",
		HTTPVersion: "2", Concurrency: 8, SendInterval: 40 * time.Millisecond, PoolSize: 2, CorrelationHeader: "X-Client-Ref", IdempotencyHeader: "Idem-Key",
		UnsafeAllowTransportReplay: true,
		LedgerPath:                 "/out/ledger.db", LedgerRetention: 48 * time.Hour, LedgerEphemeralOK: true,
		RecordsPath: "/out/records.jsonl", MaxMessages: 1050,
		WindowStart: "07:00", WindowEnd: "21:00", WindowZone: "UTC",
		ClockStart:     time.Date(2026, 11, 30, 20, 49, 50, 123456789, time.FixedZone("", 9*3600)),
		PublishTimeout: 6 * time.Second, LedgerTimeout: 3 * time.Second, SendFence: 9 * time.Second, ReconnectMin: time.Second, ReconnectMax: time.Second, Heartbeat: time.Second,
		SummaryEvery: 1000, LogLevel: "debug", CPUProfile: "/out/cpu.pprof",
	}
}

// parseArgs parses args and env with the command's binding, as the
// command does before WithDefaults.
func parseArgs(t *testing.T, args []string, env map[string]string) (Config, error) {
	t.Helper()
	var c Config
	fs := flag.NewFlagSet("notifier-worker", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := BindFlags(fs, &c)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	return c, f.Resolve(func(k string) string { return env[k] })
}

// leaves returns every leaf field of v (a struct) by its dotted name.
func leaves(v reflect.Value, prefix string, out map[string]reflect.Value) {
	for i := range v.NumField() {
		f, name := v.Field(i), prefix+v.Type().Field(i).Name
		if f.Kind() == reflect.Struct && f.Type() != reflect.TypeFor[time.Time]() {
			leaves(f, name+".", out)
			continue
		}
		out[name] = f
	}
}

// TestFullConfigIsFull: the round trip below is honest only if fullConfig
// sets every field away from the command's defaults. A new Config field
// fails here until it is set there (and then fails the round trip until
// it has a line in settings, or is listed in notOnCommandLine).
func TestFullConfigIsFull(t *testing.T) {
	def, err := parseArgs(t, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	full, defs := map[string]reflect.Value{}, map[string]reflect.Value{}
	leaves(reflect.ValueOf(fullConfig()), "", full)
	leaves(reflect.ValueOf(def), "", defs)
	for name, v := range full {
		if name == "Logger" {
			continue
		}
		if v.IsZero() {
			t.Errorf("fullConfig().%s is its zero value", name)
		}
		if reflect.DeepEqual(v.Interface(), defs[name].Interface()) {
			t.Errorf("fullConfig().%s = %v, the command's default", name, v)
		}
	}
}

// TestArgsRoundTrip: parsing Config.Args with the command's binding gives
// the same Config back, for every field on the command line.
func TestArgsRoundTrip(t *testing.T) {
	want := fullConfig()
	args := want.Args()
	if strings.Contains(strings.Join(args, " "), want.ClientSecret) {
		t.Fatalf("Args carries the client secret: %q", args)
	}
	got, err := parseArgs(t, args, nil)
	if err != nil {
		t.Fatalf("parse %q: %v", args, err)
	}
	for _, name := range notOnCommandLine {
		reflect.ValueOf(&want).Elem().FieldByName(name).SetZero()
	}
	if !got.ClockStart.Equal(want.ClockStart) {
		t.Errorf("ClockStart %v, want %v", got.ClockStart, want.ClockStart)
	}
	got.ClockStart = want.ClockStart
	if !reflect.DeepEqual(got, want) {
		g, w := map[string]reflect.Value{}, map[string]reflect.Value{}
		leaves(reflect.ValueOf(got), "", g)
		leaves(reflect.ValueOf(want), "", w)
		for name := range w {
			if !reflect.DeepEqual(g[name].Interface(), w[name].Interface()) {
				t.Errorf("%s: parsed %v, want %v", name, g[name], w[name])
			}
		}
		t.Logf("args: %q", args)
	}
}

// TestArgsZeroConfig: a zero Config renders no flag: the command's
// defaults and environment fallbacks apply.
func TestArgsZeroConfig(t *testing.T) {
	if got := (Config{}).Args(); len(got) != 0 {
		t.Errorf("Config{}.Args() = %q; want none", got)
	}
	got := Config{Concurrency: 1, DisableSingleActiveConsumer: true, OpsAddr: OpsAddrOff}.Args()
	want := []string{"-single-active-consumer=false", "-ops-addr=off", "-concurrency=1"}
	if !slices.Equal(got, want) {
		t.Errorf("Args = %q; want %q", got, want)
	}
	c, err := parseArgs(t, got, nil)
	if err != nil || c.OpsAddr != "" || !c.DisableSingleActiveConsumer || c.Concurrency != 1 {
		t.Errorf("parsed %+v, %v; want ops off, no single active consumer, concurrency 1", c, err)
	}
}

// TestEveryEnvVariable: each setting with an environment variable takes
// its value from it when its flag is not given, and the flag wins over it.
func TestEveryEnvVariable(t *testing.T) {
	full := fullConfig()
	n := 0
	for _, st := range settings {
		if st.env == "" {
			continue
		}
		n++
		t.Run(st.env, func(t *testing.T) {
			v, _ := st.render(&full)
			if st.flag == "" {
				v = full.ClientSecret
			}
			got, err := parseArgs(t, nil, map[string]string{st.env: v})
			if err != nil {
				t.Fatalf("%s=%q: %v", st.env, v, err)
			}
			if st.flag == "" {
				if got.ClientSecret != v {
					t.Errorf("%s=%q: secret %q", st.env, v, got.ClientSecret)
				}
				return
			}
			if g, _ := st.render(&got); g != v {
				t.Errorf("%s=%q: -%s is %q", st.env, v, st.flag, g)
			}
			def, _ := parseArgs(t, nil, nil)
			dv, _ := st.render(&def)
			fl, err := parseArgs(t, []string{"-" + st.flag + "=" + dv}, map[string]string{st.env: v})
			if g, _ := st.render(&fl); err != nil || g != dv {
				t.Errorf("-%s=%s with %s=%q: got %q, %v; want the flag's", st.flag, dv, st.env, v, g, err)
			}
			if st.want == "a string" {
				return
			}
			_, err = parseArgs(t, nil, map[string]string{st.env: "not-a-value"})
			if err == nil || !strings.Contains(err.Error(), st.env+` "not-a-value": want `+st.want) {
				t.Errorf("%s=not-a-value: error %v; want one naming the variable and %q", st.env, err, st.want)
			}
		})
	}
	if n < 28 {
		t.Errorf("%d settings with a variable; the command read 28 before the spec (9 inline, 18 from a map, the secret)", n)
	}
}

// TestSpecNamesUnique: no flag and no variable is declared twice.
func TestSpecNamesUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, st := range settings {
		for _, k := range []string{"-" + st.flag, "$" + st.env} {
			if k == "-" || k == "$" {
				continue
			}
			if seen[k] {
				t.Errorf("%s declared twice", k)
			}
			seen[k] = true
		}
	}
	for _, st := range directSettings {
		if seen["-"+st.flag] {
			t.Errorf("direct flag -%s is also a worker flag", st.flag)
		}
	}
}

// TestDirectArgsRoundTrip: DirectOptions.Args parses back with the direct
// subcommand's flags and the worker's.
func TestDirectArgsRoundTrip(t *testing.T) {
	want := DirectOptions{Count: 7, Warmup: 3, RefKeyPrefix: "run-1"}
	cfg := Config{Strategy: "per-request", TLSMax: "1.2", OpsAddr: OpsAddrOff}
	args := want.Args(cfg)
	if args[0] != DirectCommand {
		t.Fatalf("args %q; want %s first", args, DirectCommand)
	}
	var got DirectOptions
	var c Config
	fs := flag.NewFlagSet("direct", flag.ContinueOnError)
	BindDirectFlags(fs, &got)
	f := BindFlags(fs, &c)
	if err := fs.Parse(args[1:]); err != nil {
		t.Fatal(err)
	}
	if err := f.Resolve(func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	if got != want || c.Strategy != "per-request" || c.TLSMax != "1.2" || c.OpsAddr != "" {
		t.Errorf("parsed %+v, strategy %q, tls max %q, ops addr %q from %q", got, c.Strategy, c.TLSMax, c.OpsAddr, args)
	}
	// No warm-up is sent as such: the flag's default is 50.
	none := DirectOptions{Count: 5}.Args(Config{})
	fs = flag.NewFlagSet("direct", flag.ContinueOnError)
	got = DirectOptions{}
	BindDirectFlags(fs, &got)
	if err := fs.Parse(none[1:]); err != nil || got.Warmup != 0 || got.Count != 5 {
		t.Errorf("parsed %+v, %v from %q; want count 5, no warm-up", got, err, none)
	}
}
