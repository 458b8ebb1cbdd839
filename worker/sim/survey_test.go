package sim

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestSurvey(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("SIM_SURVEY"))
	if n == 0 {
		t.Skip("SIM_SURVEY not set")
	}
	start := time.Now()
	sum, err := Run(context.Background(), Options{Seeds: n, NoShrink: false})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d schedules, %d steps, %d checks in %s; %d failures; errors %v", sum.Schedules, sum.Steps, sum.Checks, time.Since(start), len(sum.Failures), sum.Errors)
	by := map[string][]uint64{}
	for _, f := range sum.Failures {
		d := f.Violation.Detail
		if i := strings.IndexAny(d, "0123456789"); i > 0 {
			d = d[:i]
		}
		k := f.Violation.Invariant + ": " + classify(f) + " | " + d
		by[k] = append(by[k], f.Seed)
	}
	var ks []string
	for k := range by {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for _, k := range ks {
		s := by[k]
		t.Logf("%5d %s e.g. seeds %v", len(s), k, s[:min(5, len(s))])
	}
	fk := []string{}
	for k, v := range sum.Faults {
		fk = append(fk, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(fk)
	t.Log(strings.Join(fk, " "))
}
