package sim

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"slices"
	"time"
)

// sign is the vendor's HMAC-SHA256 signature of a pushed report.
func (v *Vendor) sign(body []byte) string {
	mac := hmac.New(sha256.New, v.Secret)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// refkeys returns the refkeys the vendor knows, sorted.
func (v *Vendor) refkeys() []string {
	ks := make([]string, 0, len(v.truth))
	for k := range v.truth {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// PushDue pushes every final report that is ready and that the worker
// has not accepted yet (a push vendor retries until it gets a 2xx), and
// a delayed vendor's interim report of each processed message whose
// final one is not ready. It returns how many the worker accepted.
func (v *Vendor) PushDue() int {
	if !v.cfg.Push || v.push == nil {
		return 0
	}
	n := 0
	now := v.clock.Now()
	for _, k := range v.refkeys() {
		t := v.truth[k]
		if v.cfg.Delayed && !t.interim && !t.pushed && len(t.Processed) > 0 && t.FinalAt.After(now) {
			if body, ok := v.report(k, true); ok {
				if st := v.push(body, v.sign(body)); st >= 200 && st <= 299 {
					t.interim = true
				}
			}
		}
		if t.pushed || t.FinalAt.IsZero() || t.FinalAt.After(now) {
			continue
		}
		body, ok := v.report(k, false)
		if !ok {
			continue
		}
		if st := v.push(body, v.sign(body)); st >= 200 && st <= 299 {
			t.pushed = true
			n++
		}
	}
	return n
}

// NextReport returns when the next final report becomes ready, and false
// when none is waiting.
func (v *Vendor) NextReport() (time.Time, bool) {
	var next time.Time
	for _, t := range v.truth {
		if t.FinalAt.IsZero() || t.pushed || !v.cfg.Push && !v.cfg.Pull {
			continue
		}
		if t.FinalAt.After(v.clock.Now()) && (next.IsZero() || t.FinalAt.Before(next)) {
			next = t.FinalAt
		}
	}
	return next, !next.IsZero()
}

// PushTick is a push round in one of PushModes: the due reports, plus
// "duplicate": every accepted report pushed again; "forged": a report
// with a wrong signature claiming delivery for each refkey the vendor
// knows; "interim": an interim report for each processed refkey whose
// final report is not ready.
func (v *Vendor) PushTick(mode string) {
	if !v.cfg.Push || v.push == nil {
		return
	}
	v.PushDue()
	for _, k := range v.refkeys() {
		t := v.truth[k]
		switch mode {
		case "duplicate":
			if t.pushed {
				if body, ok := v.report(k, false); ok {
					v.push(body, v.sign(body))
				}
			}
		case "forged":
			body, _ := json.Marshal(map[string]string{"refkey": k, "result": "DELIVERED"})
			v.Forged++
			switch st := v.push(body, "sha256=00"); {
			case st == http.StatusUnauthorized:
				v.Refused++
			case st >= 200 && st <= 299:
				v.Accepted = append(v.Accepted, k)
			}
		case "interim":
			if len(t.Processed) > 0 && (t.FinalAt.IsZero() || t.FinalAt.After(v.clock.Now())) {
				if body, ok := v.report(k, true); ok {
					v.push(body, v.sign(body))
				}
			}
		}
	}
}
