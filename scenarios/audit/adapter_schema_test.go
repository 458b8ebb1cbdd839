package audit

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

const adapterSchema = "../../docs/schemas/adapter.schema.json"

// adapterSchemaCheck compiles docs/schemas/adapter.schema.json and returns
// a func that says whether an adapter file's YAML passes it.
func adapterSchemaCheck(t *testing.T) func(doc []byte) error {
	t.Helper()
	abs, err := filepath.Abs(adapterSchema)
	if err != nil {
		t.Fatal(err)
	}
	s, err := jsonschema.NewCompiler().Compile(abs)
	if err != nil {
		t.Fatalf("compile %s: %v", adapterSchema, err)
	}
	return func(doc []byte) error {
		var v any
		if err := yaml.Unmarshal(doc, &v); err != nil {
			return err
		}
		j, err := json.Marshal(v)
		if err != nil {
			return err
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
		if err != nil {
			return err
		}
		return s.Validate(inst)
	}
}

// TestAdapterSchemaAcceptsTheCommittedAdapters: every adapter file in the
// repository passes the parser and the schema.
func TestAdapterSchemaAcceptsTheCommittedAdapters(t *testing.T) {
	check := adapterSchemaCheck(t)
	files, _ := filepath.Glob("../../workers/examples/*/adapter.yaml")
	more, _ := filepath.Glob("../../results/audit/*/adapter.yaml")
	files = append(files, more...)
	if len(files) < 3 {
		t.Fatalf("%d adapter files found, want the example's and the committed audits'", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseAdapter(b); err != nil {
			t.Errorf("%s: parser: %v", f, err)
		}
		if err := check(b); err != nil {
			t.Errorf("%s: schema: %v", f, err)
		}
	}
}

// TestAdapterSchemaAgreesWithTheParser: each change to the example's
// adapter is accepted by both or refused by both (the refusals are the
// negative controls); the schema's fields are the Go type's.
func TestAdapterSchemaAgreesWithTheParser(t *testing.T) {
	check := adapterSchemaCheck(t)
	base, err := os.ReadFile("../../workers/examples/go-resty/adapter.yaml")
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(m map[string]any)) []byte {
		var m map[string]any
		if err := yaml.Unmarshal(base, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, err := yaml.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	sub := func(m map[string]any, k string) map[string]any { return m[k].(map[string]any) }
	for _, tt := range []struct {
		name string
		ok   bool
		f    func(m map[string]any)
	}{
		{"as committed", true, func(map[string]any) {}},
		{"routes none", true, func(m map[string]any) { sub(m, "queues")["routes"] = "none" }},
		{"text/plain body", true, func(m map[string]any) {
			sub(m, "message")["content_type"] = "text/plain"
			sub(m, "message")["body"] = "id={{refkey}} to={{recipient}}"
		}},
		{"refkey in a header", true, func(m map[string]any) { m["refkey"] = map[string]any{"header": "X-Client-Ref"} }},
		{"stated none", true, func(m map[string]any) { sub(m, "stated")["idle_timeout"] = "none" }},
		{"unknown top-level field", false, func(m map[string]any) { m["queue"] = "x" }},
		{"no queues.consume", false, func(m map[string]any) { delete(sub(m, "queues"), "consume") }},
		{"no queues.routes", false, func(m map[string]any) { delete(sub(m, "queues"), "routes") }},
		{"routes an empty list", false, func(m map[string]any) { sub(m, "queues")["routes"] = []any{} }},
		{"routes a word other than none", false, func(m map[string]any) { sub(m, "queues")["routes"] = "dispatch.retry" }},
		{"unknown lab value", false, func(m map[string]any) { sub(m, "env_names")["broker_uri"] = "X" }},
		{"variable name with a dash", false, func(m map[string]any) { sub(m, "env_names")["queue"] = "DISPATCH-INBOX" }},
		{"no env_names nor env", false, func(m map[string]any) { delete(m, "env_names") }},
		{"body without {{refkey}}", false, func(m map[string]any) { sub(m, "message")["body"] = `{"to": "{{recipient}}"}` }},
		{"no body", false, func(m map[string]any) { delete(sub(m, "message"), "body") }},
		{"content type xml", false, func(m map[string]any) { sub(m, "message")["content_type"] = "application/xml" }},
		{"refkey body_path and header", false, func(m map[string]any) {
			m["refkey"] = map[string]any{"header": "X-Ref", "body_path": "$.ref"}
		}},
		{"refkey body_path with brackets", false, func(m map[string]any) { m["refkey"] = map[string]any{"body_path": "$.refs[0]"} }},
		{"grace not a duration", false, func(m map[string]any) { m["grace"] = "fifteen" }},
		{"stated idle not a duration", false, func(m map[string]any) { sub(m, "stated")["idle_timeout"] = "forever" }},
		{"stated source alone", false, func(m map[string]any) { delete(sub(m, "stated"), "idle_timeout") }},
	} {
		doc := edit(tt.f)
		_, perr := ParseAdapter(doc)
		serr := check(doc)
		if (perr == nil) != tt.ok || (serr == nil) != tt.ok {
			t.Errorf("%s: want accepted %v; parser: %v; schema: %v", tt.name, tt.ok, perr, serr)
		}
	}

	var schema struct {
		Properties map[string]struct {
			PropertyNames struct {
				Enum []string `json:"enum"`
			} `json:"propertyNames"`
		} `json:"properties"`
	}
	b, _ := os.ReadFile(adapterSchema)
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	var tags []string
	for f := range reflect.TypeFor[Adapter]().Fields() {
		if tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); tag != "" && tag != "-" {
			tags = append(tags, tag)
		}
	}
	if got, want := slices.Sorted(maps.Keys(schema.Properties)), slices.Sorted(slices.Values(tags)); !slices.Equal(got, want) {
		t.Errorf("schema fields %v, the Go type's %v", got, want)
	}
	if got, want := slices.Sorted(slices.Values(schema.Properties["env_names"].PropertyNames.Enum)), slices.Sorted(maps.Keys(AdapterValueNames)); !slices.Equal(got, want) {
		t.Errorf("schema's env_names %v, AdapterValueNames %v", got, want)
	}
}
