package outcome

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, o := range All {
		got, err := Parse(string(o))
		if err != nil || got != o {
			t.Errorf("Parse(%q) = %q, %v; want %q, nil", o, got, err, o)
		}
	}
	for _, bad := range []string{"", "sent", "PENDING", "LOST", "SENT "} {
		if _, err := Parse(bad); err == nil || !strings.Contains(err.Error(), "want one of SENT") {
			t.Errorf("Parse(%q) error = %v; want one naming the allowed values", bad, err)
		}
	}
}

func TestResendable(t *testing.T) {
	want := map[Outcome]bool{NotSent: true, OutsideSendWindow: true}
	for _, o := range All {
		if o.Resendable() != want[o] {
			t.Errorf("%s.Resendable() = %v; want %v", o, o.Resendable(), want[o])
		}
	}
}

func TestReconciledKeepsAll(t *testing.T) {
	if len(Reconciled) != len(All)+4 {
		t.Fatalf("Reconciled has %d names; want %d", len(Reconciled), len(All)+4)
	}
	for i, o := range All {
		if Reconciled[i] != o {
			t.Errorf("Reconciled[%d] = %s; want %s", i, Reconciled[i], o)
		}
	}
}
