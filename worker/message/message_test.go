package message

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

// samplesDir is the shared sample folder at the repository root.
const samplesDir = "../../testdata/message"

func sampleFiles(t testing.TB, kind string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(samplesDir, kind, "*.json"))
	if err != nil {
		t.Fatalf("glob samples: %v", err)
	}
	if len(files) == 0 {
		t.Fatalf("no samples in %s/%s", samplesDir, kind)
	}
	return files
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return b
}

// looseRecipient pulls the recipient string out of a body without the
// contract's rules, so tests can check it never shows in a reason.
func looseRecipient(body []byte) string {
	var m map[string]any
	if json.Unmarshal(body, &m) != nil {
		return ""
	}
	s, _ := m["recipient"].(string)
	return s
}

func TestValidSamples(t *testing.T) {
	for _, path := range sampleFiles(t, "valid") {
		t.Run(filepath.Base(path), func(t *testing.T) {
			body := readFile(t, path)
			n, err := Decode(body)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if err := n.Validate(); err != nil {
				t.Fatalf("Validate after Decode: %v", err)
			}
			enc, err := n.Encode()
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			again, err := Decode(enc)
			if err != nil {
				t.Fatalf("Decode(Encode): %v\n%s", err, enc)
			}
			if !again.Equal(n) {
				t.Fatalf("round trip changed the message:\n got %+v\nwant %+v", again, n)
			}
		})
	}
}

func TestInvalidSamples(t *testing.T) {
	for _, path := range sampleFiles(t, "invalid") {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			wantField, _, ok := strings.Cut(strings.TrimSuffix(name, ".json"), "--")
			if !ok {
				t.Fatalf("sample name %q is not <field>--<what>.json", name)
			}
			if wantField == "document" {
				wantField = ""
			}
			body := readFile(t, path)
			n, err := Decode(body)
			if err == nil {
				t.Fatalf("Decode accepted an invalid sample: %+v", n)
			}
			if !reflect.DeepEqual(n, Notification{}) {
				t.Errorf("Decode returned a non-zero Notification with an error: %+v", n)
			}
			var ie *InvalidError
			if !errors.As(err, &ie) {
				t.Fatalf("error is %T, want *InvalidError: %v", err, err)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("errors.Is(err, ErrInvalid) = false")
			}
			if ie.Field != wantField {
				t.Errorf("Field = %q, want %q (reason %q)", ie.Field, wantField, ie.Reason)
			}
			if ie.Reason == "" {
				t.Errorf("empty Reason")
			}
			if r := looseRecipient(body); r != "" && strings.Contains(err.Error(), r) {
				t.Errorf("error %q contains the recipient in clear", err)
			}
		})
	}
}

func TestDecodeReasons(t *testing.T) {
	valid := `{"refkey":"k1","category":"ad","recipient":"+821000000001","template_code":"T1","text":"hi","created_at":"2026-11-30T10:00:00+09:00"}`
	tests := []struct {
		name       string
		body       string
		wantField  string
		wantReason string // substring
	}{
		{"leading and trailing white space is fine", "\n\t " + valid + " \n", "", ""},
		{"second object", valid + valid, "", "trailing data"},
		{"trailing garbage", valid + "x", "", "trailing data"},
		{"nested object value", strings.Replace(valid, `"hi"`, `{"a":1}`, 1), "text", "got an object"},
		{"array value", strings.Replace(valid, `"hi"`, `["a"]`, 1), "text", "got an array"},
		{"boolean value", strings.Replace(valid, `"ad"`, `true`, 1), "category", "got a boolean"},
		{"null value", strings.Replace(valid, `"ad"`, `null`, 1), "category", "got null"},
		{"duplicate key even with same value", strings.Replace(valid, `"refkey":"k1",`, `"refkey":"k1","refkey":"k1",`, 1), "refkey", "duplicate key"},
		{"unknown key is named", strings.Replace(valid, `"refkey":"k1",`, `"refkey":"k1","Refkey":"k1",`, 1), "Refkey", "unknown field"},
		{"long unknown key is cut", strings.Replace(valid, `"refkey":"k1",`, `"`+strings.Repeat("x", 500)+`":"v","refkey":"k1",`, 1), strings.Repeat("x", 40) + "...", "unknown field"},
		{"escaped key counts as the key", strings.Replace(valid, `"refkey":"k1",`, `"refkey":"k1","\u0072efkey":"k2",`, 1), "refkey", "duplicate key"},
		{"escaped value decodes", strings.Replace(valid, `"hi"`, `"\u0068i"`, 1), "", ""},
		{"offset minus", strings.Replace(valid, `+09:00`, `-05:00`, 1), "", ""},
		{"lowercase t refused", strings.Replace(valid, `T10`, `t10`, 1), "created_at", "RFC 3339"},
		{"hour 24 refused", strings.Replace(valid, `T10`, `T24`, 1), "created_at", "RFC 3339"},
		{"recipient with spaces", strings.Replace(valid, `+821000000001`, `+82 10 0000 0001`, 1), "recipient", "E.164"},
		{"recipient 16 digits", strings.Replace(valid, `+821000000001`, `+8210000000012345`, 1), "recipient", "E.164"},
		{"recipient country code 0", strings.Replace(valid, `+821000000001`, `+021000000001`, 1), "recipient", "E.164"},
		{"refkey bad char position", strings.Replace(valid, `"k1"`, `"k1/x"`, 1), "refkey", "character 3"},
		{"too large body", valid[:len(valid)-1] + `,"x":"` + strings.Repeat("a", MaxBodyBytes) + `"}`, "", "more than 65536"},
		{"number top level", "42", "", "got a number"},
		{"unterminated", `{"refkey":"k1"`, "", "not JSON"},
		{"missing colon", `{"refkey" "k1"}`, "", "not JSON"},
		{"empty object reports first required", `{}`, "refkey", "missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := Decode([]byte(tt.body))
			if tt.wantReason == "" {
				if err != nil {
					t.Fatalf("Decode: %v", err)
				}
				if n.RefKey == "" {
					t.Fatalf("valid decode returned an empty refkey")
				}
				return
			}
			var ie *InvalidError
			if !errors.As(err, &ie) {
				t.Fatalf("Decode error = %v (%T), want *InvalidError", err, err)
			}
			if ie.Field != tt.wantField || !strings.Contains(ie.Reason, tt.wantReason) {
				t.Fatalf("got Field %q Reason %q, want Field %q Reason containing %q", ie.Field, ie.Reason, tt.wantField, tt.wantReason)
			}
			if strings.Contains(err.Error(), "821000000001") {
				t.Errorf("error %q contains the recipient", err)
			}
		})
	}
}

func TestValidateBuiltInGo(t *testing.T) {
	ok := Notification{RefKey: "k", Category: Info, Recipient: "+821000000001", TemplateCode: "T", Text: "x",
		CreatedAt: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)}
	tests := []struct {
		name      string
		mutate    func(*Notification)
		wantField string // "" means valid
	}{
		{"valid", func(*Notification) {}, ""},
		{"zero time", func(n *Notification) { n.CreatedAt = time.Time{} }, FieldCreatedAt},
		{"year 10000", func(n *Notification) { n.CreatedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, FieldCreatedAt},
		{"invalid utf8 text", func(n *Notification) { n.Text = "\xff" }, FieldText},
		{"category empty", func(n *Notification) { n.Category = "" }, FieldCategory},
		{"sender key too long", func(n *Notification) { n.SenderKey = strings.Repeat("a", 65) }, FieldSenderKey},
		{"template too long", func(n *Notification) { n.TemplateCode = strings.Repeat("a", 65) }, FieldTemplateCode},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := ok
			tt.mutate(&n)
			err := n.Validate()
			if tt.wantField == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				if _, err := n.Encode(); err != nil {
					t.Fatalf("Encode: %v", err)
				}
				return
			}
			var ie *InvalidError
			if !errors.As(err, &ie) || ie.Field != tt.wantField {
				t.Fatalf("Validate = %v, want *InvalidError on %q", err, tt.wantField)
			}
			if _, err := n.Encode(); err == nil {
				t.Fatalf("Encode accepted an invalid message")
			}
		})
	}
}

func TestMaskedRecipient(t *testing.T) {
	tests := []struct{ in, want string }{
		{"+821000005678", "+82******5678"},
		{"+12025550100", "+12*****0100"},
		{"+44123456", "*****3456"}, // 9 chars: no head kept
		{"01000005678", "01*****5678"},
		{"1234567", "*******"},
		{"", ""},
		{"가나다라마바사아자차", "가나****사아자차"}, // runes, not bytes
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := Notification{Recipient: tt.in}.MaskedRecipient()
			if got != tt.want {
				t.Fatalf("MaskedRecipient(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if len(tt.in) >= 8 && got == tt.in {
				t.Fatalf("nothing masked")
			}
		})
	}
}

// TestSchemaInSync checks notification.schema.json states the same rules as
// the Go code: keys, required set, patterns, lengths, enum, strictness.
func TestSchemaInSync(t *testing.T) {
	var schema struct {
		Type                 string   `json:"type"`
		AdditionalProperties *bool    `json:"additionalProperties"`
		Required             []string `json:"required"`
		Properties           map[string]struct {
			Type      string   `json:"type"`
			MinLength *int     `json:"minLength"`
			MaxLength *int     `json:"maxLength"`
			Pattern   string   `json:"pattern"`
			Enum      []string `json:"enum"`
			Format    string   `json:"format"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(readFile(t, "notification.schema.json"), &schema); err != nil {
		t.Fatalf("parse schema: %v", err)
	}
	if schema.Type != "object" || schema.AdditionalProperties == nil || *schema.AdditionalProperties {
		t.Errorf("schema must be a closed object (additionalProperties false)")
	}
	if !reflect.DeepEqual(schema.Required, RequiredFields) {
		t.Errorf("required = %v, Go RequiredFields = %v", schema.Required, RequiredFields)
	}
	var keys []string
	for k, p := range schema.Properties {
		keys = append(keys, k)
		if p.Type != "string" {
			t.Errorf("%s: type %q, Decode accepts only strings", k, p.Type)
		}
	}
	all := append(append([]string{}, RequiredFields...), OptionalFields...)
	sort.Strings(keys)
	sort.Strings(all)
	if !reflect.DeepEqual(keys, all) {
		t.Errorf("schema properties %v, Go fields %v", keys, all)
	}
	// Struct tags name the same keys.
	var tags []string
	rt := reflect.TypeOf(Notification{})
	for i := 0; i < rt.NumField(); i++ {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		tags = append(tags, name)
	}
	sort.Strings(tags)
	if !reflect.DeepEqual(tags, all) {
		t.Errorf("struct json tags %v, fields %v", tags, all)
	}
	want := map[string]struct {
		pattern  string
		min, max int
	}{
		FieldRefKey:       {RefKeyPattern, 1, MaxRefKeyLen},
		FieldRecipient:    {RecipientPattern, 0, 0},
		FieldTemplateCode: {TemplateCodePattern, 1, MaxTemplateCodeLen},
		FieldText:         {`\S`, 1, MaxTextRunes},
		FieldSenderKey:    {SenderKeyPattern, 1, MaxSenderKeyLen},
	}
	for k, w := range want {
		p := schema.Properties[k]
		if p.Pattern != w.pattern {
			t.Errorf("%s: schema pattern %q, Go %q", k, p.Pattern, w.pattern)
		}
		if w.max != 0 && (p.MaxLength == nil || *p.MaxLength != w.max || p.MinLength == nil || *p.MinLength != w.min) {
			t.Errorf("%s: schema length [%v,%v], Go [%d,%d]", k, p.MinLength, p.MaxLength, w.min, w.max)
		}
	}
	if got := schema.Properties[FieldCategory].Enum; !reflect.DeepEqual(got, []string{string(Info), string(Ad)}) {
		t.Errorf("category enum %v, Go [info ad]", got)
	}
	if schema.Properties[FieldCreatedAt].Format != "date-time" {
		t.Errorf("created_at format %q, want date-time", schema.Properties[FieldCreatedAt].Format)
	}
}
