package vendorapi

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

const alimtalkReports = `{"push":{"auth":"hmac-sha256","header":"X-Report-Signature"},"pull":{"path":"/v3/report/{refkey}"},
"refkey_field":"refkey","result_field":"status","code_field":"code","delivered":["DELIVERED"],"failed":["FAILED"],
"unknown":["PENDING"],"horizon":"10m","complete":true}`

func TestParseReportSpec(t *testing.T) {
	s, err := ParseReportSpec(alimtalkReports)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Enabled() || s.HorizonDuration() != 10*time.Minute || !s.Complete {
		t.Errorf("spec = %+v; want enabled, horizon 10m, complete", s)
	}
	if z, err := ParseReportSpec(""); err != nil || z.Enabled() {
		t.Errorf(`ParseReportSpec("") = %+v, %v; want the zero spec`, z, err)
	}
	for name, doc := range map[string]string{
		"unknown key":  strings.Replace(alimtalkReports, `"complete"`, `"completed"`, 1),
		"bad horizon":  strings.Replace(alimtalkReports, `"10m"`, `"ten"`, 1),
		"bad auth":     strings.Replace(alimtalkReports, `"hmac-sha256"`, `"md5"`, 1),
		"no transport": `{"refkey_field":"r","result_field":"s","delivered":["D"],"failed":["F"],"horizon":"1m"}`,
		"no failed":    strings.Replace(alimtalkReports, `"failed":["FAILED"]`, `"failed":[]`, 1),
	} {
		if _, err := ParseReportSpec(doc); !errors.Is(err, ErrReportSpec) {
			t.Errorf("%s: err = %v; want ErrReportSpec", name, err)
		}
	}
}

func TestParseReport(t *testing.T) {
	s, _ := ParseReportSpec(alimtalkReports)
	for body, want := range map[string]Report{
		`{"refkey":"a","status":"DELIVERED"}`:          {RefKey: "a", Result: "DELIVERED", Kind: ReportDelivered},
		`{"refkey":"a","status":"FAILED","code":3015}`: {RefKey: "a", Result: "FAILED", Kind: ReportFailed, Code: "3015"},
		`{"refkey":"a","status":"PENDING"}`:            {RefKey: "a", Result: "PENDING", Kind: ReportPending},
	} {
		got, err := s.ParseReport([]byte(body))
		if err != nil || got != want {
			t.Errorf("ParseReport(%s) = %+v, %v; want %+v", body, got, err, want)
		}
	}
	for _, body := range []string{``, `[]`, `null`, `{"status":"DELIVERED"}`, `{"refkey":"a","status":"SENT"}`, `{"refkey":"a"}`} {
		if r, err := s.ParseReport([]byte(body)); !errors.Is(err, ErrMalformedReport) {
			t.Errorf("ParseReport(%q) = %+v, %v; want ErrMalformedReport", body, r, err)
		}
	}
}

func TestVerifyPush(t *testing.T) {
	s, _ := ParseReportSpec(alimtalkReports)
	body, secret := []byte(`{"refkey":"a","status":"DELIVERED"}`), []byte("s3cret")
	h := http.Header{}
	h.Set("X-Report-Signature", SignReport(body, secret))
	if err := s.VerifyPush(h, body, secret); err != nil {
		t.Fatalf("a signed report: %v", err)
	}
	tampered := []byte(`{"refkey":"b","status":"DELIVERED"}`)
	for name, c := range map[string]struct {
		h      http.Header
		body   []byte
		secret []byte
	}{
		"other body":      {h, tampered, secret},
		"other secret":    {h, body, []byte("guess")},
		"no header":       {http.Header{}, body, secret},
		"no secret":       {h, body, nil},
		"secret as sig":   {http.Header{"X-Report-Signature": {"s3cret"}}, body, secret},
		"unsigned sha256": {http.Header{"X-Report-Signature": {"sha256="}}, body, secret},
	} {
		err := s.VerifyPush(c.h, c.body, c.secret)
		if !errors.Is(err, ErrForgedReport) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: err = %v; want ErrForgedReport not quoting the secret", name, err)
		}
	}
	plain := s
	plain.Push = &ReportPush{Auth: ReportAuthSecret, Header: "X-Report-Secret"}
	if err := plain.VerifyPush(http.Header{"X-Report-Secret": {"s3cret"}}, body, secret); err != nil {
		t.Errorf("shared secret: %v", err)
	}
	if err := plain.VerifyPush(http.Header{"X-Report-Secret": {"s3creT"}}, body, secret); !errors.Is(err, ErrForgedReport) {
		t.Errorf("wrong shared secret: %v; want ErrForgedReport", err)
	}
}
