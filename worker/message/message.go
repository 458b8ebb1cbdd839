package message

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// Category says which delivery rules apply to a notification.
type Category string

const (
	// Info is a transactional notification (order shipped, one-time code):
	// it may be sent at any hour.
	Info Category = "info"
	// Ad is an advertising notification: it may only be sent inside the
	// send window (see package window).
	Ad Category = "ad"
)

// Limits of the contract. notification.schema.json states the same numbers;
// TestSchemaInSync fails when the two drift apart.
const (
	// MaxBodyBytes is the largest message body Decode accepts, in bytes
	// (64 KiB). A larger body is INVALID before it is parsed.
	MaxBodyBytes = 64 << 10
	// MaxRefKeyLen is the longest refkey, in characters (all ASCII).
	MaxRefKeyLen = 100
	// MaxTemplateCodeLen is the longest template_code, in characters.
	MaxTemplateCodeLen = 64
	// MaxSenderKeyLen is the longest sender_key, in characters.
	MaxSenderKeyLen = 64
	// MaxTextRunes is the longest text, in Unicode code points (runes):
	// AlimTalk templates allow at most 1,000 characters.
	MaxTextRunes = 1000
)

// Patterns of the contract, as Go regular expressions that are also valid
// ECMA-262 patterns (JSON Schema's dialect). notification.schema.json
// carries the same strings.
const (
	// RefKeyPattern: 1 to 100 of A-Z a-z 0-9 . _ : -
	RefKeyPattern = `^[A-Za-z0-9._:-]{1,100}$`
	// RecipientPattern: E.164, a "+", a country code that does not start
	// with 0, then 8 to 15 digits in all ("+821000005678" for the Korean
	// mobile 010-0000-5678). National formats ("010-0000-5678") are refused:
	// one canonical form keeps de-duplication and masking simple and works
	// for every country the vendor serves.
	RecipientPattern = `^\+[1-9][0-9]{7,14}$`
	// TemplateCodePattern: 1 to 64 of A-Z a-z 0-9 . _ -
	TemplateCodePattern = `^[A-Za-z0-9._-]{1,64}$`
	// SenderKeyPattern: 1 to 64 of A-Z a-z 0-9 _ - (the vendor's sender
	// profile key; Kakao issues 40 hex characters).
	SenderKeyPattern = `^[A-Za-z0-9_-]{1,64}$`
)

var (
	refKeyRE       = regexp.MustCompile(RefKeyPattern)
	recipientRE    = regexp.MustCompile(RecipientPattern)
	templateCodeRE = regexp.MustCompile(TemplateCodePattern)
	senderKeyRE    = regexp.MustCompile(SenderKeyPattern)
)

// Field names (JSON keys) of the contract, in the order Validate checks
// them.
const (
	FieldRefKey       = "refkey"
	FieldCategory     = "category"
	FieldRecipient    = "recipient"
	FieldTemplateCode = "template_code"
	FieldText         = "text"
	FieldCreatedAt    = "created_at"
	FieldSenderKey    = "sender_key"
)

// RequiredFields lists the keys every message must carry, in check order.
var RequiredFields = []string{
	FieldRefKey, FieldCategory, FieldRecipient, FieldTemplateCode, FieldText, FieldCreatedAt,
}

// OptionalFields lists the keys a message may carry.
var OptionalFields = []string{FieldSenderKey}

// Notification is one message to send to the vendor. The contract is
// documented in notification.schema.json (JSON Schema 2020-12) beside this
// file and in the package doc.
//
// JSON shape (all keys lower snake case):
//
//	{"refkey": "order-123-shipped", "category": "info",
//	 "recipient": "+821000005678", "template_code": "SHIP_01",
//	 "text": "...", "created_at": "2026-11-30T10:00:00+09:00",
//	 "sender_key": "..."}   // sender_key optional
type Notification struct {
	RefKey       string    `json:"refkey"`
	Category     Category  `json:"category"`
	Recipient    string    `json:"recipient"`
	TemplateCode string    `json:"template_code"`
	Text         string    `json:"text"`
	CreatedAt    time.Time `json:"created_at"`
	// SenderKey is the vendor's sender profile key (AlimTalk "sender key").
	// Optional: when empty the worker uses the one from its vendor profile.
	SenderKey string `json:"sender_key,omitempty"`
}

// ErrInvalid is the sentinel every *InvalidError matches with errors.Is.
var ErrInvalid = errors.New("invalid message")

// InvalidError says why a message cannot be sent. It is returned by Decode;
// the worker dead-letters the message with Reason in a header.
type InvalidError struct {
	Field  string // JSON key at fault, "" for the document as a whole
	Reason string // human-readable, never contains the recipient in clear
}

// Error returns "invalid message: <field>: <reason>", or "invalid message:
// <reason>" when Field is empty.
func (e *InvalidError) Error() string {
	if e.Field == "" {
		return "invalid message: " + e.Reason
	}
	return "invalid message: " + e.Field + ": " + e.Reason
}

// Is reports whether target is ErrInvalid, so callers can write
// errors.Is(err, message.ErrInvalid).
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

func invalid(field, format string, args ...any) *InvalidError {
	return &InvalidError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// Decode parses and validates one message body. It returns either a valid
// Notification and nil, or the zero Notification and an *InvalidError.
//
// Decoding is strict: the body must be valid UTF-8 of at most MaxBodyBytes,
// exactly one JSON object with no trailing data (white space aside), no
// duplicate keys, no keys outside RequiredFields and OptionalFields (a
// typo must not pass silently), and every value a JSON string (null
// included is refused). The first fault found is reported; the order is
// document, then keys as they appear, then fields in RequiredFields order.
// Reasons never quote the recipient or other values, only key names (cut to
// 40 bytes), lengths and positions, so they are safe for headers and logs.
// Decode never panics.
func Decode(body []byte) (Notification, error) {
	n, err := decode(body)
	if err != nil {
		return Notification{}, err
	}
	return n, nil
}

func decode(body []byte) (Notification, *InvalidError) {
	var n Notification
	if len(body) > MaxBodyBytes {
		return n, invalid("", "body is %d bytes, more than %d", len(body), MaxBodyBytes)
	}
	if !utf8.Valid(body) {
		return n, invalid("", "body is not valid UTF-8")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return n, invalid("", "body is empty")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	tok, err := dec.Token()
	if err != nil {
		return n, invalid("", "not JSON: %s", syntaxReason(err))
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return n, invalid("", "must be a JSON object, got %s", tokenKind(tok))
	}
	values := make(map[string]string, len(RequiredFields)+len(OptionalFields))
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return n, invalid("", "not JSON: %s", syntaxReason(err))
		}
		key, ok := tok.(string)
		if !ok { // cannot happen with encoding/json, kept as a guard
			return n, invalid("", "object key is not a string")
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return n, invalid("", "not JSON: %s", syntaxReason(err))
		}
		if !known(key) {
			return n, invalid(safeKey(key), "unknown field (allowed: %s)",
				strings.Join(append(append([]string{}, RequiredFields...), OptionalFields...), ", "))
		}
		if _, dup := values[key]; dup {
			return n, invalid(key, "duplicate key")
		}
		if len(raw) == 0 || raw[0] != '"' {
			return n, invalid(key, "must be a JSON string, got %s", rawKind(raw))
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return n, invalid(key, "must be a JSON string")
		}
		values[key] = s
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return n, invalid("", "not JSON: %s", syntaxReason(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return n, invalid("", "trailing data after the JSON object")
	}
	for _, f := range RequiredFields {
		if _, ok := values[f]; !ok {
			return n, invalid(f, "required field is missing")
		}
	}
	n = Notification{
		RefKey:       values[FieldRefKey],
		Category:     Category(values[FieldCategory]),
		Recipient:    values[FieldRecipient],
		TemplateCode: values[FieldTemplateCode],
		Text:         values[FieldText],
		SenderKey:    values[FieldSenderKey],
	}
	if _, has := values[FieldSenderKey]; has && n.SenderKey == "" {
		return Notification{}, invalid(FieldSenderKey, "must not be empty when present (omit the key instead)")
	}
	created := values[FieldCreatedAt]
	t, err := time.Parse(time.RFC3339Nano, created)
	if err != nil {
		return Notification{}, invalid(FieldCreatedAt, "must be an RFC 3339 date-time with a zone offset (2026-11-30T10:00:00+09:00)")
	}
	n.CreatedAt = t
	if e := n.validate(); e != nil {
		return Notification{}, e
	}
	return n, nil
}

// Validate checks a Notification built in Go (not decoded) against the
// contract, with the same rules and reasons as Decode. It returns nil or an
// *InvalidError.
func (n Notification) Validate() error {
	if e := n.validate(); e != nil {
		return e
	}
	return nil
}

func (n Notification) validate() *InvalidError {
	switch {
	case n.RefKey == "":
		return invalid(FieldRefKey, "must not be empty")
	case len(n.RefKey) > MaxRefKeyLen:
		return invalid(FieldRefKey, "is %d bytes, more than %d", len(n.RefKey), MaxRefKeyLen)
	case !refKeyRE.MatchString(n.RefKey):
		return invalid(FieldRefKey, "character %d is not one of A-Z a-z 0-9 . _ : -", badIndex(n.RefKey, refKeyByte))
	}
	if n.Category != Info && n.Category != Ad {
		return invalid(FieldCategory, `must be "info" or "ad"`)
	}
	if !recipientRE.MatchString(n.Recipient) {
		// Never quote the value: it is a phone number.
		return invalid(FieldRecipient, "must be E.164: \"+\", a country code not starting with 0, 8 to 15 digits in all (%d characters given)", utf8.RuneCountInString(n.Recipient))
	}
	switch {
	case n.TemplateCode == "":
		return invalid(FieldTemplateCode, "must not be empty")
	case len(n.TemplateCode) > MaxTemplateCodeLen:
		return invalid(FieldTemplateCode, "is %d bytes, more than %d", len(n.TemplateCode), MaxTemplateCodeLen)
	case !templateCodeRE.MatchString(n.TemplateCode):
		return invalid(FieldTemplateCode, "character %d is not one of A-Z a-z 0-9 . _ -", badIndex(n.TemplateCode, templateByte))
	}
	switch {
	case !utf8.ValidString(n.Text):
		return invalid(FieldText, "is not valid UTF-8")
	case strings.TrimSpace(n.Text) == "":
		return invalid(FieldText, "must not be empty or only white space")
	case utf8.RuneCountInString(n.Text) > MaxTextRunes:
		return invalid(FieldText, "is %d characters, more than %d", utf8.RuneCountInString(n.Text), MaxTextRunes)
	}
	if n.CreatedAt.IsZero() {
		return invalid(FieldCreatedAt, "must be set")
	}
	if _, err := n.CreatedAt.MarshalJSON(); err != nil {
		// Year outside 0000-9999 or an offset RFC 3339 cannot write.
		return invalid(FieldCreatedAt, "cannot be written as RFC 3339")
	}
	if n.SenderKey != "" {
		switch {
		case len(n.SenderKey) > MaxSenderKeyLen:
			return invalid(FieldSenderKey, "is %d bytes, more than %d", len(n.SenderKey), MaxSenderKeyLen)
		case !senderKeyRE.MatchString(n.SenderKey):
			return invalid(FieldSenderKey, "character %d is not one of A-Z a-z 0-9 _ -", badIndex(n.SenderKey, senderKeyByte))
		}
	}
	return nil
}

// Encode returns the canonical JSON body of a valid n (keys in schema
// order, created_at in RFC 3339 with its offset kept, sender_key omitted
// when empty). Decode(Encode(n)) returns n again. Errors: the *InvalidError
// from Validate.
func (n Notification) Encode() ([]byte, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	b, err := json.Marshal(n)
	if err != nil {
		return nil, fmt.Errorf("encode notification: %w", err)
	}
	return b, nil
}

// Equal reports whether n and o carry the same contract values; CreatedAt
// is compared as an instant and by its zone offset (so "+09:00" and "Z" for
// the same instant differ, as their JSON does).
func (n Notification) Equal(o Notification) bool {
	_, no := n.CreatedAt.Zone()
	_, oo := o.CreatedAt.Zone()
	return n.RefKey == o.RefKey && n.Category == o.Category && n.Recipient == o.Recipient &&
		n.TemplateCode == o.TemplateCode && n.Text == o.Text && n.SenderKey == o.SenderKey &&
		n.CreatedAt.Equal(o.CreatedAt) && no == oo
}

// MaskedRecipient returns the recipient with all but the last 4 digits
// masked, for logs ("+821000005678" -> "+82******5678"). The leading "+"
// and the first two digits (a country code hint) stay when the value has at
// least 10 characters; the last 4 stay when it has at least 8; every other
// character becomes "*". Safe on invalid values: a short one is all "*".
func (n Notification) MaskedRecipient() string { return Mask(n.Recipient) }

// Mask masks a phone number as MaskedRecipient does. Use it for a recipient
// that did not come through Decode.
func Mask(s string) string {
	r := []rune(s)
	total := len(r)
	keepTail := 0
	if total >= 8 {
		keepTail = 4
	}
	keepHead := 0
	if total >= 10 {
		keepHead = 2
		if r[0] == '+' {
			keepHead = 3
		}
	}
	var b strings.Builder
	for i, c := range r {
		if i < keepHead || i >= total-keepTail {
			b.WriteRune(c)
		} else {
			b.WriteByte('*')
		}
	}
	return b.String()
}

func known(key string) bool {
	for _, f := range RequiredFields {
		if f == key {
			return true
		}
	}
	for _, f := range OptionalFields {
		if f == key {
			return true
		}
	}
	return false
}

// safeKey cuts an unknown key to 40 bytes on a rune boundary, so a hostile
// key cannot flood a header.
func safeKey(k string) string {
	const max = 40
	if len(k) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(k[cut]) {
			cut--
		}
		k = k[:cut] + "..."
	}
	return k
}

func refKeyByte(c byte) bool {
	return isAlnum(c) || c == '.' || c == '_' || c == ':' || c == '-'
}
func templateByte(c byte) bool  { return isAlnum(c) || c == '.' || c == '_' || c == '-' }
func senderKeyByte(c byte) bool { return isAlnum(c) || c == '_' || c == '-' }
func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// badIndex returns the 1-based position of the first byte ok refuses.
func badIndex(s string, ok func(byte) bool) int {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return i + 1
		}
	}
	return 0
}

func syntaxReason(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "unexpected end of input"
	}
	return "malformed JSON"
}

func tokenKind(tok any) string {
	switch v := tok.(type) {
	case json.Delim:
		if v == '[' {
			return "an array"
		}
		return "a delimiter"
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "another value"
}

func rawKind(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}
