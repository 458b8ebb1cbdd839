package reconcile

import (
	"bytes"
	"regexp"
	"testing"
)

// TestWriteTableJournalSends: the table tells a journal that was read and
// held no send (0) from a journal that was not read (-), both for a run
// where nothing reached the vendor; and counts the sends when there are.
func TestWriteTableJournalSends(t *testing.T) {
	tests := []struct {
		name string
		in   func() Input
		want string
	}{
		{"read, no send", func() Input {
			in := clean()
			in.Journal = []JournalEntry{}
			return in
		}, `journal sends +0 +\(POSTs`},
		{"not read", func() Input {
			in := clean()
			in.Journal = nil
			return in
		}, `journal sends +- +\(journal not read\)`},
		{"read, three sends", clean, `journal sends +3 +\(POSTs`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Reconcile(tt.in()).WriteTable(&b); err != nil {
				t.Fatal(err)
			}
			if !regexp.MustCompile(tt.want).Match(b.Bytes()) {
				t.Errorf("table does not match %q:\n%s", tt.want, b.String())
			}
		})
	}
}
