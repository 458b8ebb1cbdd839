package vendormock

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/containerd/errdefs"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

// dockerClient returns the stack's Docker API client, connecting on first
// use. Close closes it.
func (s *Stack) dockerClient(ctx context.Context) (*testcontainers.DockerClient, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.docker != nil {
		return s.docker, nil
	}
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect to docker: %w", err)
	}
	s.docker = cli
	return cli, nil
}

// createVolume creates the named Docker volume with the stack's labels
// (LabelRun, LabelSession) and records it for Close. An existing volume of
// that name is an error: a fresh ledger must be empty.
func (s *Stack) createVolume(ctx context.Context, name string) error {
	cli, err := s.dockerClient(ctx)
	if err != nil {
		return fmt.Errorf("create volume %s: %w", name, err)
	}
	if _, err := cli.VolumeInspect(ctx, name, client.VolumeInspectOptions{}); err == nil {
		return fmt.Errorf("create volume %s: it already exists", name)
	}
	if _, err := cli.VolumeCreate(ctx, client.VolumeCreateOptions{Name: name, Labels: s.labels()}); err != nil {
		return fmt.Errorf("create volume %s: %w", name, err)
	}
	s.mu.Lock()
	s.volumes = append(s.volumes, name)
	s.mu.Unlock()
	return nil
}

// removeVolume removes the named volume (no container may use it any
// more); an absent volume is not an error.
func (s *Stack) removeVolume(ctx context.Context, name string) error {
	cli, err := s.dockerClient(ctx)
	if err != nil {
		return fmt.Errorf("remove volume %s: %w", name, err)
	}
	if _, err := cli.VolumeRemove(ctx, name, client.VolumeRemoveOptions{Force: true}); err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("remove volume %s: %w", name, err)
	}
	s.mu.Lock()
	s.volumes = slices.DeleteFunc(s.volumes, func(v string) bool { return v == name })
	s.mu.Unlock()
	return nil
}

// closeVolumes removes every volume the stack created, after its
// containers are gone, and closes the Docker client.
func (s *Stack) closeVolumes(ctx context.Context) error {
	s.mu.Lock()
	vols := slices.Clone(s.volumes)
	cli := s.docker
	s.mu.Unlock()
	var errs []error
	for _, v := range vols {
		errs = append(errs, s.removeVolume(ctx, v))
	}
	if cli != nil {
		errs = append(errs, cli.Close())
		s.mu.Lock()
		s.docker = nil
		s.mu.Unlock()
	}
	return errors.Join(errs...)
}
