package vendormock

import (
	"context"
	"errors"
	"testing"

	"github.com/testcontainers/testcontainers-go"
)

// The error Docker gave in CI (c8c169d) for a published port another
// socket had taken.
var errClash = errors.New("container start: Error response from daemon: driver failed programming external connectivity on endpoint pedantic_wright (ed20): Error starting userland proxy: listen tcp4 0.0.0.0:32786: bind: address already in use")

func TestStartRetriesPortClashThenSucceeds(t *testing.T) {
	calls, removed := 0, 0
	ok := &testcontainers.DockerContainer{}
	c, err := startRetryingPortClash(context.Background(), func() (testcontainers.Container, error) {
		calls++
		if calls < 3 {
			return &testcontainers.DockerContainer{}, errClash
		}
		return ok, nil
	}, func(testcontainers.Container) { removed++ })
	if err != nil || c != ok || calls != 3 || removed != 2 {
		t.Fatalf("c=%v err=%v calls=%d removed=%d; want the third attempt's container, 3 calls, 2 removed", c, err, calls, removed)
	}
}

func TestStartGivesUpAfterThreeClashes(t *testing.T) {
	calls, removed := 0, 0
	_, err := startRetryingPortClash(context.Background(), func() (testcontainers.Container, error) {
		calls++
		return nil, errClash
	}, func(testcontainers.Container) { removed++ })
	if !errors.Is(err, errClash) || calls != portClashAttempts || removed != portClashAttempts-1 {
		t.Fatalf("err=%v calls=%d removed=%d; want the clash after %d attempts", err, calls, removed, portClashAttempts)
	}
}

// Negative control: any other error (here a failed wait) is not retried.
func TestStartDoesNotRetryOtherErrors(t *testing.T) {
	calls := 0
	other := errors.New("container exited with code 1: wait until ready: address already in use in the app's own log")
	_, err := startRetryingPortClash(context.Background(), func() (testcontainers.Container, error) {
		calls++
		return nil, other
	}, func(testcontainers.Container) { t.Error("removed a container of an error that is not a port clash") })
	if !errors.Is(err, other) || calls != 1 {
		t.Fatalf("err=%v calls=%d; want the error after one attempt", err, calls)
	}
	if isPortClash(errors.New("Bind for 127.0.0.1:5432 failed: port is already allocated")) {
		t.Error("a clash on a fixed port (not 'address already in use') is not Docker's ephemeral race")
	}
}
