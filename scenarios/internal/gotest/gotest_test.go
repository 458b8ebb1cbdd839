package gotest

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// A go test -json stream: a parent with two subtests (one failed), a log
// line with its file:line prefix and a continuation line, a build line
// outside any test.
const stream = `{"Action":"run","Test":"TestA"}
{"Action":"output","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"run","Test":"TestA/one"}
{"Action":"output","Test":"TestA/one","Output":"    a_test.go:12: seed 7 broke it\n"}
{"Action":"output","Test":"TestA/one","Output":"        its trace\n"}
{"Action":"output","Test":"TestA/one","Output":"--- PASS: TestA/one (0.00s)\n"}
{"Action":"pass","Test":"TestA/one"}
{"Action":"run","Test":"TestA/two"}
{"Action":"fail","Test":"TestA/two"}
{"Action":"output","Test":"TestA","Output":"    a_test.go:30: 3 of 10 seeds\n"}
{"Action":"fail","Test":"TestA"}
{"Action":"output","Output":"FAIL\texample/pkg\t0.1s\n"}
# example/pkg
`

func TestParse(t *testing.T) {
	ev := Parse([]byte(stream))
	if !ev.Passed("TestA/one") || ev.Passed("TestA/two") || ev.Passed("TestA") || ev.Passed("TestB") {
		t.Errorf("passed: one %t two %t TestA %t TestB %t; want true false false false",
			ev.Passed("TestA/one"), ev.Passed("TestA/two"), ev.Passed("TestA"), ev.Passed("TestB"))
	}
	if got := ev.Subtests("TestA"); !slices.Equal(got, []string{"TestA/one", "TestA/two"}) {
		t.Errorf("Subtests = %q", got)
	}
	if got, want := ev.Logs("TestA"), []string{"seed 7 broke it", "its trace", "3 of 10 seeds"}; !slices.Equal(got, want) {
		t.Errorf("Logs = %q, want %q", got, want)
	}
	if got := ev.Logs("TestA/one"); !slices.Equal(got, []string{"seed 7 broke it", "its trace"}) {
		t.Errorf("Logs(TestA/one) = %q", got)
	}
	if got := ev.LastLines(errors.New("exit status 1")); got != "FAIL\texample/pkg\t0.1s; # example/pkg" {
		t.Errorf("LastLines = %q", got)
	}
	if got := Parse(nil).LastLines(errors.New("exit status 2")); got != "exit status 2" {
		t.Errorf("LastLines of nothing = %q", got)
	}
}

// Logs keeps at most MaxLogLines lines and says how many it left out.
func TestLogsBounded(t *testing.T) {
	var b strings.Builder
	for range MaxLogLines + 5 {
		b.WriteString(`{"Action":"output","Test":"T","Output":"    x_test.go:1: line\n"}` + "\n")
	}
	got := Parse([]byte(b.String())).Logs("T")
	if len(got) != MaxLogLines+1 || got[MaxLogLines] != "... 5 more lines" {
		t.Errorf("%d lines, last %q", len(got), got[len(got)-1])
	}
}
