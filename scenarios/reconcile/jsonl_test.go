package reconcile

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestPublishedRoundTrip(t *testing.T) {
	want := []Published{pub(1, "a"), invalidPub(2, "bad-1"), pub(3, "b")}
	var b bytes.Buffer
	for _, p := range want {
		if err := WritePublished(&b, p); err != nil {
			t.Fatalf("WritePublished: %v", err)
		}
	}
	if n := strings.Count(b.String(), "\n"); n != len(want) {
		t.Fatalf("wrote %d lines, want %d:\n%s", n, len(want), b.String())
	}
	got, err := ReadPublished(&b)
	if err != nil {
		t.Fatalf("ReadPublished: %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("read %d, want %d", len(got), len(want))
	}
	for i := range want {
		if !got[i].PublishedAt.Equal(want[i].PublishedAt) {
			t.Errorf("line %d: published_at %v, want %v", i+1, got[i].PublishedAt, want[i].PublishedAt)
		}
		got[i].PublishedAt = want[i].PublishedAt // compared with Equal above (monotonic and location differ)
		if got[i] != want[i] {
			t.Errorf("line %d: got %+v, want %+v", i+1, got[i], want[i])
		}
	}
}

func TestReadPublishedErrors(t *testing.T) {
	tests := []struct {
		name, in string
		wantLine string // "" = no error
		wantN    int
	}{
		{name: "empty", in: "", wantN: 0},
		{name: "blank lines skipped", in: "\n{\"seq\":1,\"refkey\":\"a\",\"valid\":true}\n\n", wantN: 1},
		{name: "not JSON", in: "{\"seq\":1,\"refkey\":\"a\",\"valid\":true}\nnope\n", wantLine: "line 2"},
		{name: "unknown key", in: "{\"seq\":1,\"refkey\":\"a\",\"valid\":true,\"recipient\":\"x\"}\n", wantLine: "line 1"},
		{name: "valid without refkey", in: "{\"seq\":1,\"message_id\":\"m\",\"valid\":true}\n", wantLine: "line 1"},
		{name: "two values on a line", in: "{\"seq\":1,\"refkey\":\"a\",\"valid\":true}{}\n", wantLine: "line 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadPublished(strings.NewReader(tt.in))
			if tt.wantLine == "" {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				if got == nil || len(got) != tt.wantN {
					t.Fatalf("got %v (nil=%v), want %d entries", got, got == nil, tt.wantN)
				}
				return
			}
			if !errors.Is(err, ErrMalformedLine) || !strings.Contains(err.Error(), tt.wantLine) {
				t.Fatalf("err = %v, want ErrMalformedLine at %s", err, tt.wantLine)
			}
		})
	}
}
