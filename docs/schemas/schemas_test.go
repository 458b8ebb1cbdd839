package schemas

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// compile compiles a schema file (a "#/$defs/x" fragment picks a part),
// with format assertions on (date-time is checked).
func compile(t *testing.T, file, fragment string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	abs, err := filepath.Abs(file)
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(abs + fragment)
	if err != nil {
		t.Fatalf("compile %s%s: %v", file, fragment, err)
	}
	return s
}

// check validates a JSON document against s; want says whether it must pass.
func check(t *testing.T, s *jsonschema.Schema, name string, doc []byte, want bool) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		if want {
			t.Errorf("%s: not JSON: %v", name, err)
		}
		return
	}
	err = s.Validate(inst)
	if want && err != nil {
		t.Errorf("%s: want valid, got %v\n%s", name, err, doc)
	}
	if !want && err == nil {
		t.Errorf("%s: want invalid (a negative control), the schema accepted it:\n%s", name, doc)
	}
}

// The message schema accepts every valid sample and rejects each invalid
// one that JSON Schema can express (a duplicate key, trailing data and
// invalid UTF-8 are refused by worker/message.Decode only, as the
// schema's description says).
func TestMessageSchemaAgainstTheSamples(t *testing.T) {
	s := compile(t, "../../worker/message/notification.schema.json", "")
	valid, _ := filepath.Glob("../../testdata/message/valid/*.json")
	invalid, _ := filepath.Glob("../../testdata/message/invalid/*.json")
	if len(valid) < 5 || len(invalid) < 10 {
		t.Fatalf("samples: %d valid, %d invalid", len(valid), len(invalid))
	}
	beyond := map[string]bool{"refkey--duplicate-key.json": true, "document--trailing-data.json": true, "document--invalid-utf8.json": true}
	for _, f := range valid {
		b, _ := os.ReadFile(f)
		check(t, s, filepath.Base(f), b, true)
	}
	for _, f := range invalid {
		if beyond[filepath.Base(f)] {
			continue
		}
		b, _ := os.ReadFile(f)
		check(t, s, filepath.Base(f), b, false)
	}
}

// Records written by the Go worker's own type validate; a line without
// cpu_ms, or a NOT_SENT without a reason, does not.
func TestRecordsLineSchema(t *testing.T) {
	s := compile(t, "records-line.schema.json", "")
	t0 := time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC)
	good := []records.Record{
		{Seq: 1, RefKey: "r-1", Outcome: outcome.Sent, Code: "1000", Start: t0, End: t0.Add(30 * time.Millisecond), TotalMS: 21.5, CPUMS: 3.2, Reused: true, TLSVersion: "1.3"},
		{Seq: 2, RefKey: "r-2", Outcome: outcome.NotSent, Queue: "notifications.retry", Error: "dial tcp: connection refused", Start: t0, End: t0, CPUMS: 3.4},
		{Seq: 3, RefKey: "r-1", Outcome: outcome.Duplicate, Redelivered: true, Start: t0, End: t0, CPUMS: 3.5},
		{Seq: 4, RefKey: "", Outcome: outcome.Invalid, Queue: "notifications.dead", Error: "refkey: missing", Start: t0, End: t0, CPUMS: 3.6},
	}
	for _, r := range good {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		check(t, s, string(r.Outcome), b, true)
	}
	check(t, s, "no cpu_ms", []byte(`{"refkey":"r","outcome":"SENT","start":"2026-12-05T01:00:00Z","end":"2026-12-05T01:00:00Z","total_ms":1}`), false)
	check(t, s, "NOT_SENT without a reason", []byte(`{"refkey":"r","outcome":"NOT_SENT","queue":"q.retry","start":"2026-12-05T01:00:00Z","end":"2026-12-05T01:00:00Z","total_ms":1,"cpu_ms":1,"error":" "}`), false)
	check(t, s, "start not a time", []byte(`{"refkey":"r","outcome":"SENT","start":"yesterday","end":"2026-12-05T01:00:00Z","total_ms":1,"cpu_ms":1}`), false)
}

// Each profile's status table, as the lab gives it (VENDOR_STATUS_TABLE),
// validates; an outcome a table may not name does not.
func TestStatusTableSchema(t *testing.T) {
	s := compile(t, "status-table.schema.json", "")
	for _, name := range []string{"alimtalk", "sms"} {
		p, err := vendormock.LoadProfile("../../vendormock/profiles/" + name)
		if err != nil {
			t.Fatal(err)
		}
		check(t, s, name+" status table", []byte(p.StatusTableJSON), true)
	}
	check(t, s, "SENT in a table", []byte(`{"success_code":"0","statuses":{"200":"SENT"}}`), false)
	check(t, s, "bad status key", []byte(`{"success_code":"0","statuses":{"2xxx":"UNKNOWN"}}`), false)
}

// handlebarsRE matches a WireMock template expression; dollarRE a run
// variable of the stubs.
var (
	handlebarsRE = regexp.MustCompile(`\{\{.*?\}\}`)
	dollarRE     = regexp.MustCompile(`\$\{[a-z_]+\}`)
)

// render fills a stub body as WireMock would, with fixed sample values.
func render(b []byte) []byte {
	b = dollarRE.ReplaceAll(b, []byte("sample-token"))
	return handlebarsRE.ReplaceAllFunc(b, func(m []byte) []byte {
		if bytes.Contains(m, []byte("now")) {
			return []byte("2026-12-05T02:00:00+00:00")
		}
		return []byte("sample")
	})
}

// For each profile: the Go worker's vendor client, pointed at a test
// server that answers with the profile's own stub bodies, sends a token
// request and a send whose bodies validate against the vendor's schema;
// every stub body validates as an answer. A send body without the
// refkey field does not.
func TestVendorSchemasAgainstTheGoWorkerAndTheStubs(t *testing.T) {
	for _, name := range []string{"alimtalk", "sms"} {
		t.Run(name, func(t *testing.T) {
			p, err := vendormock.LoadProfile("../../vendormock/profiles/" + name)
			if err != nil {
				t.Fatal(err)
			}
			file := "vendor-" + name + ".schema.json"
			bodies := "../../vendormock/profiles/" + name + "/stubs/bodies/"
			tokenBody, _ := os.ReadFile(bodies + "token.json")
			sendBody, _ := os.ReadFile(bodies + map[string]string{"alimtalk": "send.json", "sms": "accepted.json"}[name])
			var gotToken url.Values
			var gotSend []byte
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				w.Header().Set("Content-Type", "application/json")
				switch r.URL.Path {
				case p.API.TokenPath:
					gotToken, _ = url.ParseQuery(string(b))
					_, _ = w.Write(render(tokenBody))
				case p.API.SendPath:
					gotSend = b
					_, _ = w.Write(render(sendBody))
				}
			}))
			defer srv.Close()
			env := p.VendorAPIEnv()
			api := vendorapi.API{TokenPath: env["VENDOR_TOKEN_PATH"], TokenAuth: env["VENDOR_TOKEN_AUTH"], SendPath: env["VENDOR_SEND_PATH"],
				RefKeyField: env["VENDOR_REFKEY_FIELD"], CodeField: env["VENDOR_CODE_FIELD"]}
			var table vendorapi.StatusTable
			if err := json.Unmarshal([]byte(p.StatusTableJSON), &table); err != nil {
				t.Fatal(err)
			}
			strategy := vendorapi.Strategies()[vendorapi.PooledName](vendorapi.Config{})
			c := vendorapi.NewClient(srv.URL, vendorapi.Credentials{ClientID: "lab-client", ClientSecret: "s3cret"}, strategy,
				vendorapi.WithAPI(api), vendorapi.WithStatusTable(table))
			defer c.Close()
			res, err := c.Send(context.Background(), message.Notification{RefKey: "order-1", Category: message.Info,
				Recipient: "+821000005678", TemplateCode: "SHIP_01", Text: "Your order shipped"})
			if err != nil || vendorapi.ClassOf(err) != outcome.Sent {
				t.Fatalf("send: %v (%+v)", err, res)
			}
			check(t, compile(t, file, "#/$defs/send_request"), "the Go worker's send body", gotSend, true)
			check(t, compile(t, file, "#/$defs/send_response"), "stub send answer", render(sendBody), true)
			check(t, compile(t, file, "#/$defs/token_response"), "stub token answer", render(tokenBody), true)
			if name == "sms" {
				form := map[string]string{}
				for k := range gotToken {
					form[k] = gotToken.Get(k)
				}
				b, _ := json.Marshal(form)
				check(t, compile(t, file, "#/$defs/token_request"), "the Go worker's token form", b, true)
			}
			// Every other stub body is an answer of the vendor's shape.
			all, _ := filepath.Glob(bodies + "*.json")
			for _, f := range all {
				b := render(mustRead(t, f))
				def := "#/$defs/send_response"
				if bytes.Contains(b, []byte(`"error"`)) {
					def = "#/$defs/oauth_error"
				}
				if strings.HasSuffix(f, "token.json") {
					def = "#/$defs/token_response"
				}
				check(t, compile(t, file, def), filepath.Base(f), b, true)
			}
			var m map[string]any
			_ = json.Unmarshal(gotSend, &m)
			delete(m, p.API.RefKeyField)
			b, _ := json.Marshal(m)
			check(t, compile(t, file, "#/$defs/send_request"), "a send without the refkey field", b, false)
		})
	}
}

func mustRead(t *testing.T, f string) []byte {
	t.Helper()
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
