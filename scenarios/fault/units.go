package fault

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Duration is a time.Duration written in YAML as a Go duration ("2s",
// "500ms").
type Duration time.Duration

// UnmarshalYAML reads a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	v, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration (like 2s or 500ms)", n.Line, s)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the Go duration string.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// MarshalText writes the Go duration string (JSON).
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads a Go duration string (JSON).
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// D returns the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// Count is an expected count: exact ("3" or 3), at least (">=1"), or a
// range ("0..2", both ends included).
type Count struct {
	Min, Max int // Max < 0 = no upper bound
}

// Exactly returns the Count n.
func Exactly(n int) Count { return Count{Min: n, Max: n} }

// Match reports whether n is within c.
func (c Count) Match(n int) bool { return n >= c.Min && (c.Max < 0 || n <= c.Max) }

// String writes c as it is written in a scenario file.
func (c Count) String() string {
	switch {
	case c.Max < 0:
		return ">=" + strconv.Itoa(c.Min)
	case c.Min == c.Max:
		return strconv.Itoa(c.Min)
	default:
		return fmt.Sprintf("%d..%d", c.Min, c.Max)
	}
}

// ParseCount reads "3", ">=1" or "0..2".
func ParseCount(s string) (Count, error) {
	s = strings.TrimSpace(s)
	bad := fmt.Errorf("%q is not a count (3, >=1 or 0..2)", s)
	if rest, ok := strings.CutPrefix(s, ">="); ok {
		n, err := strconv.Atoi(strings.TrimSpace(rest))
		if err != nil || n < 0 {
			return Count{}, bad
		}
		return Count{Min: n, Max: -1}, nil
	}
	if lo, hi, ok := strings.Cut(s, ".."); ok {
		a, err1 := strconv.Atoi(strings.TrimSpace(lo))
		b, err2 := strconv.Atoi(strings.TrimSpace(hi))
		if err1 != nil || err2 != nil || a < 0 || b < a {
			return Count{}, bad
		}
		return Count{Min: a, Max: b}, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return Count{}, bad
	}
	return Exactly(n), nil
}

// UnmarshalYAML reads a number or a count string.
func (c *Count) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	v, err := ParseCount(s)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*c = v
	return nil
}

// MarshalYAML writes the count string.
func (c Count) MarshalYAML() (any, error) { return c.String(), nil }

// MarshalText writes the count string (JSON).
func (c Count) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText reads a count string (JSON).
func (c *Count) UnmarshalText(b []byte) error {
	v, err := ParseCount(string(b))
	if err != nil {
		return err
	}
	*c = v
	return nil
}
