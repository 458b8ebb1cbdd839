package worker

import (
	"regexp"
	"strings"

	"github.com/notifier-lab/notifier-lab/worker/message"
)

// MaxErrorText is the longest error text (bytes) put in a header or a
// Record; longer text is cut.
const MaxErrorText = 512

var (
	bearerRE = regexp.MustCompile(`(?i)(bearer|basic)\s+[A-Za-z0-9._~+/=-]+`)
	// phoneRE matches phone-number-like digit runs (8+ digits, optional
	// leading +, spaces or dashes between).
	phoneRE = regexp.MustCompile(`\+?\d(?:[\d -]{6,}\d)`)
	// secretRE matches key=value / "key":"value" pairs whose key names a
	// secret.
	secretRE = regexp.MustCompile(`(?i)("?(?:access_?token|accesstoken|token|secret|password|client_secret)"?\s*[:=]\s*"?)[^"&,\s}]+`)
)

// Redact returns s fit for a header, a log line or a Record: the recipient
// (when given) and any phone-number-like digit run masked to its last 4
// digits, bearer/basic credentials and token/secret values replaced by
// "<redacted>", cut to MaxErrorText bytes.
func Redact(s, recipient string) string {
	if recipient != "" {
		s = strings.ReplaceAll(s, recipient, message.Mask(recipient))
	}
	s = bearerRE.ReplaceAllString(s, "$1 <redacted>")
	s = secretRE.ReplaceAllString(s, "${1}<redacted>")
	s = phoneRE.ReplaceAllStringFunc(s, MaskDigits)
	if len(s) > MaxErrorText {
		s = s[:MaxErrorText] + "..."
	}
	return s
}

// MaskDigits keeps the last 4 digits of s and replaces every earlier digit
// with '*' ("+821000005678" -> "+8*******5678").
func MaskDigits(s string) string {
	b := []byte(s)
	keep := 4
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] >= '0' && b[i] <= '9' {
			if keep > 0 {
				keep--
				continue
			}
			b[i] = '*'
		}
	}
	return string(b)
}
