package reconcile

import (
	"slices"
	"testing"
)

func TestReconcile(t *testing.T) {
	for _, tt := range reconcileCases() {
		t.Run(tt.name, func(t *testing.T) {
			r := Reconcile(tt.in())
			var rules []string
			for _, v := range r.Violations {
				rules = append(rules, v.Rule)
			}
			slices.Sort(rules)
			if !slices.Equal(rules, tt.wantRules) {
				t.Errorf("rules = %q, want %q\nviolations: %+v", rules, tt.wantRules, r.Violations)
			}
			if r.OK != (len(tt.wantRules) == 0 && len(r.Checks) > 0) {
				t.Errorf("OK = %v with %d violations", r.OK, len(r.Violations))
			}
			if !slices.Equal(r.LostIDs, orEmpty(tt.wantLost)) || r.Lost != len(tt.wantLost) {
				t.Errorf("lost = %d %q, want %q", r.Lost, r.LostIDs, tt.wantLost)
			}
			if !slices.Equal(r.DuplicateRefKeys, orEmpty(tt.wantDups)) || r.Duplicates != len(tt.wantDups) {
				t.Errorf("duplicates = %d %q, want %q", r.Duplicates, r.DuplicateRefKeys, tt.wantDups)
			}
			if r.Suppressed != tt.wantSupp {
				t.Errorf("suppressed = %d, want %d", r.Suppressed, tt.wantSupp)
			}
			if tt.wantByOut != nil && !mapsEqual(r.ByOutcome, tt.wantByOut) {
				t.Errorf("by_outcome = %v, want %v", r.ByOutcome, tt.wantByOut)
			}
			if tt.wantChecks != nil && !slices.Equal(r.Checks, tt.wantChecks) {
				t.Errorf("checks = %q, want %q", r.Checks, tt.wantChecks)
			}
		})
	}
}
