package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// ErrAdapter is wrapped by LoadAdapter and ParseAdapter for an adapter
// file that cannot be used; the message names the field, what is wrong
// and what is allowed.
var ErrAdapter = errors.New("bad adapter file")

// Adapter is a team's adapter file (docs/auditing.md#the-adapter-file):
// how to run their worker image as it is, for the black-box audit. The
// lab never changes the image; it fills the image's own environment from
// Env and EnvNames, publishes Message to Queues.Consume, and finds the
// refkey in the vendor request where RefKey says.
type Adapter struct {
	// Image is the worker image ("" = WORKER=image:NAME must name it).
	Image string `yaml:"image"`
	// EnvNames maps a lab value (AdapterValues' keys: broker_url, queue,
	// vendor_url, ca_file, client_id, client_secret, ...) to the name of
	// the variable the image reads it from.
	EnvNames map[string]string `yaml:"env_names"`
	// Env is an environment template: variable name -> value, where
	// {{name}} is replaced by a lab value (AdapterValues). It wins over
	// EnvNames for the same variable.
	Env map[string]string `yaml:"env"`
	// Queues are the queues the worker consumes and routes to.
	Queues AdapterQueues `yaml:"queues"`
	// Message is one message in the team's own schema.
	Message AdapterMessage `yaml:"message"`
	// RefKey says where the refkey appears in the vendor's send request.
	RefKey AdapterRefKey `yaml:"refkey"`
	// Grace is the worker's own shutdown budget after SIGTERM (default
	// 15s); Startup bounds the wait for its consumer (default 60s).
	Grace   string `yaml:"grace"`
	Startup string `yaml:"startup"`
	// Stated is what the team states of its client (its idle timeout),
	// shown beside the probes' measure and never judged.
	Stated AdapterStated `yaml:"stated"`

	grace, startup time.Duration
}

// AdapterQueues: Consume is the queue the worker consumes (the lab
// publishes there through the default exchange); Routes the queues it
// re-publishes to (retry, parking, dead-letter), or the one word "none".
type AdapterQueues struct {
	Consume string    `yaml:"consume"`
	Routes  yaml.Node `yaml:"routes"`

	routes []string
}

// AdapterMessage is the message template: Body with the placeholders
// {{refkey}} (required), {{recipient}}, {{text}} and {{now}}; ContentType
// ("application/json" by default: the placeholders are then filled
// JSON-escaped and the filled body must be valid JSON) and AMQP Headers.
type AdapterMessage struct {
	ContentType string            `yaml:"content_type"`
	Headers     map[string]string `yaml:"headers"`
	Body        string            `yaml:"body"`
}

// AdapterRefKey is where the refkey is in the vendor's send request:
// BodyPath, a JSON path into the body ("$.client_ref", "meta.ref"), or
// Header, a request header; neither = the profile's api.refkey_field.
type AdapterRefKey struct {
	BodyPath string `yaml:"body_path"`
	Header   string `yaml:"header"`
}

// AdapterValueNames are the lab values an adapter can name (EnvNames keys,
// {{name}} in Env), with what each holds.
var AdapterValueNames = map[string]string{
	"broker_url":          "AMQP URL of the broker (amqp://user:pass@host:5672/)",
	"broker_host":         "the broker's host name",
	"broker_port":         "the broker's AMQP port",
	"broker_user":         "the broker's user name",
	"broker_password":     "the broker's password",
	"broker_vhost":        "the broker's virtual host (/)",
	"vendor_host":         "the vendor's host name (the certificate's name)",
	"ca_pem":              "the CA certificate itself (PEM text), for an image that takes it in a variable",
	"queue":               "the queue the worker consumes (queues.consume)",
	"vendor_url":          "the vendor's base URL (https://host)",
	"ca_file":             "path of the CA certificate (PEM) that signs the vendor's certificate",
	"client_id":           "the vendor credentials' client id",
	"client_secret":       "the vendor credentials' secret",
	"client_cert":         "path of the client certificate (PEM) under mutual TLS, \"\" otherwise",
	"client_key":          "path of the client key (PEM) under mutual TLS, \"\" otherwise",
	"token_path":          "the vendor's token path (/v1/token)",
	"token_auth":          "how the token call authenticates: basic or form",
	"send_path":           "the vendor's send path (/v3/message)",
	"refkey_field":        "the send body's refkey field",
	"code_field":          "the answer's business code field",
	"success_code":        "the business code of an accepted send",
	"correlation_header":  "the header the vendor logs the refkey from",
	"response_timeout_ms": "the vendor's advised response timeout, ms",
	"status_table":        "the vendor's status table as JSON (docs/schemas/status-table.schema.json)",
	"http_version":        "\"2\" when the vendor offers HTTP/2, else \"1.1\"",
}

var (
	placeholderRE = regexp.MustCompile(`\{\{\s*([a-z_]+)\s*\}\}`)
	envNameRE     = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	queueNameRE   = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,255}$`)
	headerNameRE  = regexp.MustCompile(`^[A-Za-z0-9-]+$`)
	bodyPathRE    = regexp.MustCompile(`^(\$\.)?[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$`)
)

// messageValues are the placeholders of a message body: {{now}} is the
// publish time, RFC 3339 in UTC.
var messageValues = []string{"refkey", "recipient", "text", "now"}

// LoadAdapter reads and validates an adapter file (YAML; JSON is YAML
// too). Errors: the file's, ErrAdapter with every problem found, each
// naming its field and what is allowed.
func LoadAdapter(path string) (*Adapter, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read adapter: %w", err)
	}
	a, err := ParseAdapter(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

// ParseAdapter parses and validates an adapter file's bytes (LoadAdapter).
func ParseAdapter(b []byte) (*Adapter, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var a Adapter
	if err := dec.Decode(&a); err != nil {
		return nil, fmt.Errorf("%w: %w (allowed top-level fields: image, env_names, env, queues, message, refkey, grace, startup, stated)", ErrAdapter, err)
	}
	if errs := a.validate(); len(errs) > 0 {
		return nil, fmt.Errorf("%w:\n  %s", ErrAdapter, strings.Join(errs, "\n  "))
	}
	return &a, nil
}

// validate fills the parsed fields and returns every problem.
func (a *Adapter) validate() []string {
	var errs []string
	bad := func(field, format string, args ...any) {
		errs = append(errs, field+": "+fmt.Sprintf(format, args...))
	}
	known := slices.Sorted(maps.Keys(AdapterValueNames))
	for _, k := range slices.Sorted(maps.Keys(a.EnvNames)) {
		if _, ok := AdapterValueNames[k]; !ok {
			bad("env_names."+k, "unknown lab value; allowed: %s", strings.Join(known, ", "))
		}
		if !envNameRE.MatchString(a.EnvNames[k]) {
			bad("env_names."+k, "%q is not a variable name (letters, digits, '_'; not starting with a digit)", a.EnvNames[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(a.Env)) {
		if !envNameRE.MatchString(k) {
			bad("env."+k, "not a variable name (letters, digits, '_'; not starting with a digit)")
		}
		for _, m := range placeholderRE.FindAllStringSubmatch(a.Env[k], -1) {
			if _, ok := AdapterValueNames[m[1]]; !ok {
				bad("env."+k, "unknown placeholder {{%s}}; allowed: %s", m[1], strings.Join(known, ", "))
			}
		}
	}
	if len(a.EnvNames) == 0 && len(a.Env) == 0 {
		bad("env_names", "missing: name at least the variables of broker_url, queue, vendor_url and ca_file (or give env, a template)")
	} else {
		env := a.Environment(AdapterSample())
		// Each group must reach a variable: the value, or one of its forms.
		for _, group := range [][]string{{"broker_url", "broker_host"}, {"queue"}, {"vendor_url", "vendor_host"}, {"ca_file", "ca_pem"}} {
			reached := slices.ContainsFunc(group, func(need string) bool {
				return slices.ContainsFunc(slices.Collect(maps.Values(env)), func(v string) bool { return strings.Contains(v, AdapterSample()[need]) })
			})
			if !reached {
				need := group[0]
				bad("env_names."+need, "no variable carries the lab's %s (%s; or %s): name one in env_names or use {{%s}} in env", need, AdapterValueNames[need], strings.Join(group, ", "), need)
			}
		}
	}
	if !queueNameRE.MatchString(a.Queues.Consume) {
		bad("queues.consume", "%q: want the queue name the worker consumes (letters, digits, '.', '_', ':', '-')", a.Queues.Consume)
	}
	routes, err := parseRoutes(a.Queues.Routes)
	if err != nil {
		bad("queues.routes", "%v", err)
	}
	for _, r := range routes {
		if !queueNameRE.MatchString(r) || r == a.Queues.Consume {
			bad("queues.routes", "%q: want queue names other than queues.consume, or the word none", r)
		}
	}
	a.Queues.routes = routes
	switch a.Message.ContentType {
	case "":
		a.Message.ContentType = "application/json"
	case "application/json", "text/plain":
	default:
		if !strings.HasSuffix(a.Message.ContentType, "+json") {
			bad("message.content_type", "%q: allowed application/json (default), application/*+json, text/plain", a.Message.ContentType)
		}
	}
	if strings.TrimSpace(a.Message.Body) == "" {
		bad("message.body", "missing: one message in your schema with {{refkey}}, {{recipient}} and {{text}} where they go")
	} else {
		seen := map[string]bool{}
		for _, m := range placeholderRE.FindAllStringSubmatch(a.Message.Body, -1) {
			if !slices.Contains(messageValues, m[1]) {
				bad("message.body", "unknown placeholder {{%s}}; allowed: refkey, recipient, text, now", m[1])
			}
			seen[m[1]] = true
		}
		if !seen["refkey"] {
			bad("message.body", "no {{refkey}}: the audit tells messages apart by it; put it where your schema keeps the message's unique id")
		}
		if a.jsonBody() {
			if body := a.Render("r-1", "+821000000000", "text"); !json.Valid(body) {
				bad("message.body", "with content_type %s the filled body is not valid JSON: %s", a.Message.ContentType, body)
			}
		}
	}
	for k := range a.Message.Headers {
		if strings.TrimSpace(k) == "" {
			bad("message.headers", "an empty header name")
		}
	}
	if a.RefKey.BodyPath != "" && a.RefKey.Header != "" {
		bad("refkey", "give body_path or header, not both")
	}
	if a.RefKey.BodyPath != "" && !bodyPathRE.MatchString(a.RefKey.BodyPath) {
		bad("refkey.body_path", "%q: want a JSON path of object keys, e.g. $.client_ref or meta.ref", a.RefKey.BodyPath)
	}
	if a.RefKey.Header != "" && !headerNameRE.MatchString(a.RefKey.Header) {
		bad("refkey.header", "%q: want a header name (letters, digits, '-')", a.RefKey.Header)
	}
	for _, d := range []struct {
		field string
		in    string
		out   *time.Duration
		def   time.Duration
	}{{"grace", a.Grace, &a.grace, 15 * time.Second}, {"startup", a.Startup, &a.startup, 60 * time.Second}} {
		*d.out = d.def
		if d.in == "" {
			continue
		}
		v, err := time.ParseDuration(d.in)
		if err != nil || v <= 0 || v > 10*time.Minute {
			bad(d.field, "%q: want a duration above 0 and at most 10m, e.g. 15s", d.in)
			continue
		}
		*d.out = v
	}
	return append(errs, a.Stated.validate()...)
}

// parseRoutes reads queues.routes: a list of names, or the word "none".
func parseRoutes(n yaml.Node) ([]string, error) {
	switch n.Kind {
	case 0:
		return nil, fmt.Errorf("missing: list the queues the worker re-publishes to, or write none")
	case yaml.ScalarNode:
		if n.Value == "none" {
			return nil, nil
		}
		return nil, fmt.Errorf("%q: want a list of queue names or the word none", n.Value)
	case yaml.SequenceNode:
		var out []string
		if err := n.Decode(&out); err != nil {
			return nil, fmt.Errorf("want a list of queue names: %w", err)
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("an empty list: write none when the worker routes nowhere")
		}
		return out, nil
	}
	return nil, fmt.Errorf("want a list of queue names or the word none")
}

// Routes returns the queues the worker routes to (none: empty).
func (a *Adapter) Routes() []string { return slices.Clone(a.Queues.routes) }

// Queues returns the consumed queue, then the routes.
func (a *Adapter) AllQueues() []string {
	return append([]string{a.Queues.Consume}, a.Queues.routes...)
}

// GraceDuration and StartupDuration are Grace and Startup parsed.
func (a *Adapter) GraceDuration() time.Duration   { return a.grace }
func (a *Adapter) StartupDuration() time.Duration { return a.startup }

// jsonBody reports whether the message is JSON.
func (a *Adapter) jsonBody() bool {
	ct := a.Message.ContentType
	return ct == "" || ct == "application/json" || strings.HasSuffix(ct, "+json")
}

// Environment returns the worker's environment for the lab values vals
// (AdapterValues): EnvNames first, then Env with its placeholders filled
// (an unknown value fills as ""). It holds the client secret: never log it.
func (a *Adapter) Environment(vals map[string]string) map[string]string {
	env := map[string]string{}
	for k, name := range a.EnvNames {
		env[name] = vals[k]
	}
	for name, tmpl := range a.Env {
		env[name] = placeholderRE.ReplaceAllStringFunc(tmpl, func(m string) string {
			return vals[placeholderRE.FindStringSubmatch(m)[1]]
		})
	}
	return env
}

// Render fills the message template: refkey, recipient and text,
// JSON-escaped when the message is JSON.
func (a *Adapter) Render(refkey, recipient, text string) []byte {
	vals := map[string]string{"refkey": refkey, "recipient": recipient, "text": text, "now": time.Now().UTC().Format(time.RFC3339)}
	return []byte(placeholderRE.ReplaceAllStringFunc(a.Message.Body, func(m string) string {
		v := vals[placeholderRE.FindStringSubmatch(m)[1]]
		if a.jsonBody() {
			q, _ := json.Marshal(v)
			return string(q[1 : len(q)-1])
		}
		return v
	}))
}

// AdapterSample is a set of lab values each distinct, for validation.
func AdapterSample() map[string]string {
	out := map[string]string{}
	for k := range AdapterValueNames {
		out[k] = "<lab:" + k + ">"
	}
	return out
}
