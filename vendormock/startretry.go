package vendormock

import (
	"context"
	"strings"
	"time"

	"github.com/testcontainers/testcontainers-go"
)

// portClashAttempts is how many times StartContainer tries a container
// whose published port Docker could not bind.
const portClashAttempts = 3

// StartContainer is testcontainers.GenericContainer with Started: true,
// tried again (up to 3 attempts in all) when Docker could not bind a
// published host port ("driver failed programming external connectivity
// ... bind: address already in use"). Docker picks a published port from
// the ephemeral range that the host's own client connections use too;
// under the parallel lanes of ./run.sh test another socket can take the
// port between Docker's pick and its bind (CI at c8c169d lost a lane to
// it). The failed container is removed before the next attempt, so a fixed
// req.Name is free again. Any other error returns at once, with the
// container when testcontainers returned one (the caller removes it).
func StartContainer(ctx context.Context, req testcontainers.ContainerRequest) (testcontainers.Container, error) {
	start := func() (testcontainers.Container, error) {
		return testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{ContainerRequest: req, Started: true})
	}
	remove := func(c testcontainers.Container) {
		if c != nil && !isNilContainer(c) {
			_ = testcontainers.TerminateContainer(c, testcontainers.StopContext(context.WithoutCancel(ctx)), testcontainers.StopTimeout(2*time.Second))
		}
	}
	return startRetryingPortClash(ctx, start, remove)
}

// startRetryingPortClash runs start until it succeeds, fails with an error
// that is not a port clash, ctx ends, or portClashAttempts are spent;
// remove gets each container of a clashing attempt.
func startRetryingPortClash(ctx context.Context, start func() (testcontainers.Container, error), remove func(testcontainers.Container)) (testcontainers.Container, error) {
	for attempt := 1; ; attempt++ {
		c, err := start()
		if err == nil || !isPortClash(err) || attempt == portClashAttempts || ctx.Err() != nil {
			return c, err
		}
		remove(c)
	}
}

// isPortClash reports Docker's error for a published port it could not
// bind because another socket holds it.
func isPortClash(err error) bool {
	s := err.Error()
	return strings.Contains(s, "address already in use") &&
		(strings.Contains(s, "programming external connectivity") || strings.Contains(s, "userland proxy"))
}
