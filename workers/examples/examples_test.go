package examples

import (
	"os/exec"
	"testing"
)

// The go-resty example builds, passes go vet and its own tests in its own
// module (its go.mod pins resty and amqp091-go).
func TestGoRestyExampleBuilds(t *testing.T) {
	for _, args := range [][]string{{"vet", "./..."}, {"test", "./..."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = "go-resty"
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %v in go-resty: %v\n%s", args, err, out)
		}
	}
}
