package vendormock

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	"github.com/wiremock/go-wiremock"
)

// The nemesis: a container of the run frozen (docker pause) or cut off
// from the run's network (docker network disconnect), and put back. The
// fault scenarios (scenarios/fault) undo each of them when a scenario
// ends; docs/deployment.md ("Nemesis") says what each one models.

// ErrNoService is returned (wrapped) for a service name the stack has not
// started.
var ErrNoService = errors.New("no such service")

// ErrNoPartition is returned (wrapped) by PartitionContainer for
// Toxiproxy: it carries every path of the run (cut one with its proxy),
// and the clients of its API hold its host port, which a reconnect moves.
var ErrNoPartition = errors.New("toxiproxy is not partitioned: disable one of its proxies instead")

// Services are the names ServiceContainerID knows: the stack's four
// services and PostgreSQL (once StartPostgres ran). They equal the
// services' aliases on the run's network.
var Services = []string{AliasRabbitMQ, AliasPostgres, AliasNginx, AliasWireMock, AliasToxiproxy}

// ServiceContainerID returns the Docker id of a stack service by its name
// (Services). Errors: ErrNoService naming the services started.
func (s *Stack) ServiceContainerID(name string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.containers[name]; c != nil {
		return c.GetContainerID(), nil
	}
	var have []string
	for n := range s.containers {
		have = append(have, n)
	}
	slices.Sort(have)
	return "", fmt.Errorf("service %q: %w (started: %s)", name, ErrNoService, strings.Join(have, ", "))
}

// PauseContainer freezes every process of a container of this run (docker
// pause: the cgroup freezer). The processes get no signal and no CPU; the
// kernel keeps their TCP connections open and answers for them (ACKs,
// keepalives), so peers see a silent, not a closed, connection. Errors:
// the container is not running or already paused, Docker errors.
func (s *Stack) PauseContainer(ctx context.Context, id string) error {
	cli, err := s.dockerClient(ctx)
	if err != nil {
		return fmt.Errorf("pause %s: %w", shortID(id), err)
	}
	if _, err := cli.ContainerPause(ctx, id, client.ContainerPauseOptions{}); err != nil {
		return fmt.Errorf("pause %s: %w", shortID(id), err)
	}
	s.logf("container %s paused", shortID(id))
	return nil
}

// UnpauseContainer thaws a container PauseContainer froze. Errors: the
// container is not paused, Docker errors.
func (s *Stack) UnpauseContainer(ctx context.Context, id string) error {
	cli, err := s.dockerClient(ctx)
	if err != nil {
		return fmt.Errorf("unpause %s: %w", shortID(id), err)
	}
	if _, err := cli.ContainerUnpause(ctx, id, client.ContainerUnpauseOptions{}); err != nil {
		return fmt.Errorf("unpause %s: %w", shortID(id), err)
	}
	s.logf("container %s unpaused", shortID(id))
	return nil
}

// Partition is a container cut off from the run's network by
// PartitionContainer; Heal connects it again.
type Partition struct {
	s         *Stack
	container string
	// Aliases are the container's network aliases before the cut, which
	// Heal gives back (Docker drops them with the endpoint).
	Aliases []string
}

// PartitionContainer disconnects a container from the run's network
// (docker network disconnect --force): its interface on the network is
// removed, so nothing on the network reaches it and it reaches nothing
// there, and its ports published on 127.0.0.1 stop answering. Peers'
// TCP connections to it get no answer (no RST: the address is gone),
// until their own timeouts. It remembers the container's aliases for
// Heal. Errors: ErrNoPartition for Toxiproxy, the container is not on
// the network, Docker errors.
func (s *Stack) PartitionContainer(ctx context.Context, id string) (*Partition, error) {
	if tp, err := s.ServiceContainerID(AliasToxiproxy); err == nil && tp == id {
		return nil, fmt.Errorf("partition toxiproxy: %w", ErrNoPartition)
	}
	cli, err := s.dockerClient(ctx)
	if err != nil {
		return nil, fmt.Errorf("partition %s: %w", shortID(id), err)
	}
	ins, err := cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		return nil, fmt.Errorf("partition %s: %w", shortID(id), err)
	}
	var ep *network.EndpointSettings
	if ns := ins.Container.NetworkSettings; ns != nil {
		ep = ns.Networks[s.Network]
	}
	if ep == nil {
		return nil, fmt.Errorf("partition %s: not on network %s", shortID(id), s.Network)
	}
	p := &Partition{s: s, container: id, Aliases: userAliases(ep.Aliases, id)}
	if _, err := cli.NetworkDisconnect(ctx, s.Network, client.NetworkDisconnectOptions{Container: id, Force: true}); err != nil {
		return nil, fmt.Errorf("partition %s: %w", shortID(id), err)
	}
	s.logf("container %s cut off from network %s (aliases %s)", shortID(id), s.Network, strings.Join(p.Aliases, ", "))
	return p, nil
}

// Heal connects the container to the run's network again with the aliases
// it had, so its names resolve again. Docker may give it another address:
// connections cut by the partition stay dead, peers dial anew. Docker
// publishes its ports again on new ephemeral host ports: Heal updates the
// stack's host URLs of a service (AMQPURL, WireMockURL, NginxAddrHost,
// PostgreSQL's URLHost); a worker's ops port is looked up on each use.
// Errors: Docker errors (for example the container was removed
// meanwhile), ErrNoPartition for Toxiproxy (see PartitionContainer).
func (p *Partition) Heal(ctx context.Context) error {
	cli, err := p.s.dockerClient(ctx)
	if err != nil {
		return fmt.Errorf("heal %s: %w", shortID(p.container), err)
	}
	if _, err := cli.NetworkConnect(ctx, p.s.Network, client.NetworkConnectOptions{
		Container: p.container, EndpointConfig: &network.EndpointSettings{Aliases: p.Aliases},
	}); err != nil {
		return fmt.Errorf("heal %s: %w", shortID(p.container), err)
	}
	if err := p.s.rebindHostPorts(ctx, p.container); err != nil {
		return fmt.Errorf("heal %s: %w", shortID(p.container), err)
	}
	p.s.logf("container %s connected to network %s again (aliases %s)", shortID(p.container), p.s.Network, strings.Join(p.Aliases, ", "))
	return nil
}

// NetworkAliases returns a container's aliases on the run's network (the
// ones given at its start, without the short id Docker adds). Errors: the
// container is not on the network, Docker errors.
func (s *Stack) NetworkAliases(ctx context.Context, id string) ([]string, error) {
	cli, err := s.dockerClient(ctx)
	if err != nil {
		return nil, err
	}
	ins, err := cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		return nil, err
	}
	if ns := ins.Container.NetworkSettings; ns != nil {
		if ep := ns.Networks[s.Network]; ep != nil {
			return userAliases(append(slices.Clone(ep.Aliases), ep.DNSNames...), id), nil
		}
	}
	return nil, fmt.Errorf("container %s: not on network %s", shortID(id), s.Network)
}

// ContainerPaused reports whether a container is paused. Errors: Docker
// errors.
func (s *Stack) ContainerPaused(ctx context.Context, id string) (bool, error) {
	cli, err := s.dockerClient(ctx)
	if err != nil {
		return false, err
	}
	ins, err := cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		return false, err
	}
	return ins.Container.State != nil && ins.Container.State.Paused, nil
}

// userAliases drops the names Docker adds by itself (the container's short
// id, its name) and duplicates, keeping order.
func userAliases(names []string, id string) []string {
	var out []string
	for _, a := range names {
		if a == "" || strings.HasPrefix(id, a) || strings.HasPrefix(a, "lab-") || slices.Contains(out, a) {
			continue
		}
		out = append(out, a)
	}
	return out
}

// shortID is the 12-digit form Docker prints.
func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// URLVia returns the ledger's network URL with its host:port replaced by
// hostport (for example AliasToxiproxy+":5432", a Toxiproxy proxy in front
// of PostgreSQL), the credentials and database kept. Never log it.
func (p *Postgres) URLVia(hostport string) string {
	u, err := url.Parse(p.URLNetwork)
	if err != nil {
		return p.URLNetwork
	}
	u.Host = hostport
	return u.String()
}

// Running reports whether the worker's container is running (a paused one
// counts as running): false once it exited, by itself or killed. Errors:
// Docker errors.
func (w *Worker) Running(ctx context.Context) (bool, error) {
	st, err := w.c.State(ctx)
	if err != nil {
		return false, fmt.Errorf("state of worker %s: %w", w.name, err)
	}
	return st.Running, nil
}

// Running reports whether the replica's current container is running.
// Errors: no container, Docker errors.
func (r *Replica) Running(ctx context.Context) (bool, error) {
	wk, err := r.current()
	if err != nil {
		return false, err
	}
	return wk.Running(ctx)
}

// rebindHostPorts re-reads the host ports of the stack service whose
// container is id (a reconnect published them anew) and updates the
// stack's host URLs; nothing for other containers.
func (s *Stack) rebindHostPorts(ctx context.Context, id string) error {
	s.mu.Lock()
	var name string
	var c testcontainers.Container
	for n, x := range s.containers {
		if x.GetContainerID() == id {
			name, c = n, x
		}
	}
	s.mu.Unlock()
	node := slices.IndexFunc(s.Brokers(), func(b BrokerNode) bool { return b.key == name })
	port := map[string]string{AliasRabbitMQ: "5672/tcp", AliasWireMock: "8080/tcp", AliasNginx: "443/tcp", AliasPostgres: "5432/tcp"}[name]
	if node >= 0 {
		port = "5672/tcp"
	}
	if port == "" {
		return nil
	}
	addr, err := hostAddr(ctx, c, port)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	switch {
	case node >= 0:
		s.mu.Lock()
		s.brokers[node].AMQPURL = "amqp://guest:guest@" + addr + "/"
		if node == 0 {
			s.AMQPURL = s.brokers[node].AMQPURL
		}
		s.mu.Unlock()
	case name == AliasRabbitMQ:
		s.AMQPURL = "amqp://guest:guest@" + addr + "/"
	case name == AliasWireMock:
		s.WireMockURL = "http://" + addr
		s.wm = wiremock.NewClient(s.WireMockURL)
	case name == AliasNginx:
		s.NginxAddrHost = addr
	case name == AliasPostgres:
		s.pgMu.Lock()
		if s.pg != nil {
			if u, err := url.Parse(s.pg.URLHost); err == nil {
				u.Host = addr
				s.pg.URLHost = u.String()
			}
		}
		s.pgMu.Unlock()
	}
	s.logf("%s published again on %s", name, addr)
	return nil
}
