package results

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestCommandLine: the recorded command reads as a line to paste after the
// prompt, and bash splits it back into exactly the words given.
func TestCommandLine(t *testing.T) {
	for _, tc := range []struct {
		command []string
		want    string
	}{
		{[]string{"run", "COUNT=1000", "RTTS=3 10"}, `./run.sh COUNT=1000 RTTS="3 10"`},
		{[]string{"scale", "CONCURRENCY=1,8", "OUT=/tmp/s"}, `./run.sh scale CONCURRENCY=1,8 OUT=/tmp/s`},
		{[]string{"run", "SCENARIO=all"}, `./run.sh SCENARIO=all`},
		{[]string{"mutate", "ledger"}, `./run.sh mutate ledger`},
		{[]string{"run", `OUT=a "b" $HOME` + "`x`\\"}, `./run.sh OUT="a \"b\" \$HOME` + "\\`x\\`" + `\\"`},
		{[]string{"run", "two words"}, `./run.sh "two words"`},
	} {
		p := &Provenance{Command: tc.command}
		got := p.CommandLine()
		if got != tc.want {
			t.Errorf("CommandLine(%q) = %s, want %s", tc.command, got, tc.want)
		}
		out, err := exec.Command("bash", "-c", `f() { printf '%s\n' "$@"; }; f `+strings.TrimPrefix(got, "./run.sh ")).Output()
		if err != nil {
			t.Fatalf("bash: %v", err)
		}
		words := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		want := tc.command
		if want[0] == "run" {
			want = want[1:]
		}
		if !slices.Equal(words, want) {
			t.Errorf("bash splits %s into %q, want %q", got, words, want)
		}
		if !strings.Contains(p.Header(), "Command: `"+got+"`") {
			t.Errorf("Header does not carry the command line:\n%s", p.Header())
		}
	}
}

// TestImagesSummary: a command that started no container says "none";
// an image set names its kind, worker and RabbitMQ, an unknown part "-".
func TestImagesSummary(t *testing.T) {
	for _, tc := range []struct {
		im   ImagesInfo
		want string
	}{
		{ImagesInfo{}, "none"},
		{ImagesInfo{Kind: "offline", Worker: "w:1", RabbitMQ: "r:2"}, "offline (worker w:1, rabbitmq r:2)"},
		{ImagesInfo{Nginx: "n:1"}, "unknown (worker -, rabbitmq -)"},
	} {
		if got := tc.im.Summary(); got != tc.want {
			t.Errorf("%+v.Summary() = %q, want %q", tc.im, got, tc.want)
		}
	}
}
