package vendorapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/notifier-lab/notifier-lab/worker/message"
)

// Token authentication styles of API.TokenAuth
// (docs/worker-contract.md#what-the-lab-gives-the-worker).
const (
	// TokenAuthBasic sends the client id and secret as HTTP Basic
	// credentials with an empty body (the alimtalk profile).
	TokenAuthBasic = "basic"
	// TokenAuthForm sends them in a form-encoded body,
	// grant_type=client_credentials&client_id=...&client_secret=..., as an
	// OAuth2 client-credentials grant (RFC 6749 sections 2.3.1 and 4.4).
	TokenAuthForm = "form"
)

// Default API shape: the alimtalk profile's (docs/vendor-api.md).
const (
	DefaultRefKeyField = "refkey"
	DefaultCodeField   = "code"
)

// ErrAPI is wrapped by API.Validate's errors, and by every Send of a
// client built with an API that does not validate.
var ErrAPI = errors.New("invalid vendor api")

// API is the shape of the vendor's HTTP API: the paths of the token and
// send calls, how the token call authenticates, the send body's field that
// carries the refkey and the answer's field that carries the business code.
// The values come from a vendor profile's api keys (token_path,
// token_auth, send_path, refkey_field, code_field;
// docs/worker-contract.md#what-the-lab-gives-the-worker). An empty field
// means the DefaultAPI value, so API{} is the alimtalk shape.
type API struct {
	// TokenPath is the token endpoint, an absolute path (default TokenPath,
	// "/v1/token").
	TokenPath string
	// TokenAuth is TokenAuthBasic (the default) or TokenAuthForm.
	TokenAuth string
	// SendPath is the send endpoint, an absolute path (default
	// MessagePath, "/v3/message").
	SendPath string
	// RefKeyField is the send body's JSON key holding the refkey (default
	// "refkey"). It may not be one of the body's other keys (recipient,
	// template_code, text, category).
	RefKeyField string
	// CodeField is the send answer's JSON key holding the business code, a
	// string or a number (default "code").
	CodeField string
}

// DefaultAPI returns the alimtalk shape: POST /v1/token with HTTP Basic,
// POST /v3/message with the refkey in "refkey", the code in "code".
func DefaultAPI() API {
	return API{TokenPath: TokenPath, TokenAuth: TokenAuthBasic, SendPath: MessagePath,
		RefKeyField: DefaultRefKeyField, CodeField: DefaultCodeField}
}

// WithDefaults returns a with every empty field set to DefaultAPI's.
func (a API) WithDefaults() API {
	d := DefaultAPI()
	set := func(p *string, v string) {
		if *p == "" {
			*p = v
		}
	}
	set(&a.TokenPath, d.TokenPath)
	set(&a.TokenAuth, d.TokenAuth)
	set(&a.SendPath, d.SendPath)
	set(&a.RefKeyField, d.RefKeyField)
	set(&a.CodeField, d.CodeField)
	return a
}

// bodyKeys are the send body's keys other than the refkey's
// (messageFields' JSON names).
var bodyKeys = []string{"recipient", "template_code", "text", "category"}

// Validate checks a (after WithDefaults) and returns every problem found,
// joined, each wrapping ErrAPI and naming the field and what is allowed:
// a path that is not absolute or holds a query, fragment or space; a
// TokenAuth other than "basic" or "form"; a refkey field that is empty
// after defaults or collides with another body key.
func (a API) Validate() error {
	a = a.WithDefaults()
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrAPI}, args...)...))
	}
	for _, p := range []struct{ name, v string }{{"token path", a.TokenPath}, {"send path", a.SendPath}} {
		if !strings.HasPrefix(p.v, "/") || strings.ContainsAny(p.v, "?# \t\r\n") {
			bad("%s %q: want an absolute path like /v1/token, without query, fragment or spaces", p.name, p.v)
		}
	}
	if a.TokenAuth != TokenAuthBasic && a.TokenAuth != TokenAuthForm {
		bad("token auth %q: known: %s (HTTP Basic), %s (OAuth2 client credentials in a form body)", a.TokenAuth, TokenAuthBasic, TokenAuthForm)
	}
	for _, k := range bodyKeys {
		if a.RefKeyField == k {
			bad("refkey field %q: it is already a key of the send body (%s)", a.RefKeyField, strings.Join(bodyKeys, ", "))
		}
	}
	return errors.Join(errs...)
}

// WithAPI sets the vendor API's shape (default DefaultAPI; empty fields
// keep their default). An API that does not Validate makes every Send
// fail NotSent with Reason ReasonRequest and an error wrapping ErrAPI,
// without a request: validate it first to report the problem at start.
func WithAPI(a API) Option {
	return func(c *Client) {
		c.api = a.WithDefaults()
		c.apiErr = a.Validate()
	}
}

// messageFields are the send body's keys after the refkey:
//
//	{"<refkey field>": "order-123-shipped", "recipient": "+821000005678",
//	 "template_code": "SHIP_01", "text": "...", "category": "info"}
//
// category is "info" or "ad".
type messageFields struct {
	Recipient    string `json:"recipient"`
	TemplateCode string `json:"template_code"`
	Text         string `json:"text"`
	Category     string `json:"category"`
}

// sendBody is the JSON body of a send: the refkey under field first, then
// messageFields, in that order (with the default field, the same bytes as
// the alimtalk body). The lab's stubs match on the refkey field.
func sendBody(field string, n message.Notification) ([]byte, error) {
	key, err := json.Marshal(field)
	if err != nil {
		return nil, err
	}
	ref, err := json.Marshal(n.RefKey)
	if err != nil {
		return nil, err
	}
	rest, err := json.Marshal(messageFields{Recipient: n.Recipient, TemplateCode: n.TemplateCode,
		Text: n.Text, Category: string(n.Category)})
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteByte('{')
	b.Write(key)
	b.WriteByte(':')
	b.Write(ref)
	b.WriteByte(',')
	b.Write(rest[1:]) // messageFields always has keys: rest is {"recipient":...}
	return b.Bytes(), nil
}

// vendorAnswer is what the worker reads of a vendor's JSON answer.
type vendorAnswer struct {
	Code        flexString
	Description string
	MessageKey  string
}

// Keys read for the answer's description and the vendor's message id, the
// first present wins: alimtalk's "description" and "messagekey", an SMS
// gateway's "message" and "message_id", OAuth2's "error_description" and
// "error" (docs/vendor-api.md#result-codes).
var (
	descriptionKeys = []string{"description", "message", "error_description", "error"}
	messageKeyKeys  = []string{"messagekey", "message_id"}
)

// parseAnswer decodes a vendor answer: a JSON object (or null) whose
// codeField is a string or number and whose "description" and
// "messagekey", when present, are strings. ok is false for anything else
// (not JSON, not an object, one of those keys of the wrong type). The other
// keys of descriptionKeys and messageKeyKeys are read when they are
// strings and skipped otherwise.
func parseAnswer(data []byte, codeField string) (a vendorAnswer, ok bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return a, false
	}
	if raw, found := m[codeField]; found && json.Unmarshal(raw, &a.Code) != nil {
		return a, false
	}
	str := func(keys []string) (string, bool) {
		for i, k := range keys {
			raw, found := m[k]
			if !found {
				continue
			}
			var s string
			if json.Unmarshal(raw, &s) != nil {
				if i == 0 {
					return "", false
				}
				continue
			}
			return s, true
		}
		return "", true
	}
	var okD, okK bool
	a.Description, okD = str(descriptionKeys)
	a.MessageKey, okK = str(messageKeyKeys)
	return a, okD && okK
}
