package vendorapi

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestStatusTableKeyRange: an exact status key is a three-digit status
// from 100 to 599 outside 2xx; 100 and 599 are the edges, 099 and 600 are
// refused.
func TestStatusTableKeyRange(t *testing.T) {
	for key, valid := range map[string]bool{"100": true, "599": true, "099": false, "600": false} {
		doc := fmt.Sprintf("success_code: \"1000\"\nstatuses:\n  %q: UNKNOWN\n", key)
		_, err := ParseStatusTable([]byte(doc))
		if valid && err != nil {
			t.Errorf("status key %s: %v; want valid", key, err)
		}
		if !valid && (!errors.Is(err, ErrStatusTable) || !strings.Contains(err.Error(), "statuses."+key)) {
			t.Errorf("status key %s: %v; want ErrStatusTable naming statuses.%s", key, err, key)
		}
	}
}

// TestReportHorizonPositive: a report spec's horizon must be > 0: "0s" is
// refused, "1ns" accepted.
func TestReportHorizonPositive(t *testing.T) {
	for horizon, valid := range map[string]bool{"0s": false, "1ns": true} {
		s, err := ParseReportSpec(strings.Replace(alimtalkReports, `"10m"`, fmt.Sprintf("%q", horizon), 1))
		if valid && (err != nil || s.HorizonDuration() != time.Nanosecond) {
			t.Errorf("horizon %s: %+v, %v; want valid, 1ns", horizon, s, err)
		}
		if !valid && (!errors.Is(err, ErrReportSpec) || !strings.Contains(err.Error(), "horizon must be a Go duration > 0")) {
			t.Errorf("horizon %s: %v; want ErrReportSpec on the horizon", horizon, err)
		}
	}
}
