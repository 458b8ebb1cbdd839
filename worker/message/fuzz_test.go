package message

import (
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

var digitRun = regexp.MustCompile(`[0-9]{8,}`)

// FuzzDecode checks Decode on any input: it never panics and yields either
// a valid Notification (that re-validates, encodes and decodes back to
// itself) or an *InvalidError with a non-empty Reason that does not carry
// the recipient's digits. Seeds: every shared sample in
// testdata/message/{valid,invalid} plus the corpus in
// testdata/fuzz/FuzzDecode.
//
//	go test -fuzz=FuzzDecode -fuzztime=60s ./worker/message/
func FuzzDecode(f *testing.F) {
	for _, kind := range []string{"valid", "invalid"} {
		for _, path := range sampleFiles(f, kind) {
			f.Add(readFile(f, path))
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		n, err := Decode(body)
		if err != nil {
			var ie *InvalidError
			if !errors.As(err, &ie) {
				t.Fatalf("error %T is not *InvalidError: %v", err, err)
			}
			if strings.TrimSpace(ie.Reason) == "" {
				t.Fatalf("empty reason (field %q)", ie.Field)
			}
			if !reflect.DeepEqual(n, Notification{}) {
				t.Fatalf("non-zero Notification with an error")
			}
			if r := looseRecipient(body); r != "" {
				for _, run := range digitRun.FindAllString(r, -1) {
					if strings.Contains(ie.Reason, run) {
						t.Fatalf("reason %q carries recipient digits %q", ie.Reason, run)
					}
				}
			}
			return
		}
		if err := n.Validate(); err != nil {
			t.Fatalf("decoded message does not re-validate: %v", err)
		}
		enc, err := n.Encode()
		if err != nil {
			t.Fatalf("Encode: %v", err)
		}
		again, err := Decode(enc)
		if err != nil {
			t.Fatalf("Decode(Encode(n)): %v\n%s", err, enc)
		}
		if !again.Equal(n) {
			t.Fatalf("round trip changed the message:\n got %+v\nwant %+v", again, n)
		}
		if masked := n.MaskedRecipient(); masked == n.Recipient || len(masked) != len(n.Recipient) {
			t.Fatalf("MaskedRecipient %q does not mask %d characters", masked, len(n.Recipient))
		}
	})
}
