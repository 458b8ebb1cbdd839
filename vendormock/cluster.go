// A RabbitMQ cluster of Options.BrokerNodes nodes from the run's RabbitMQ
// image, and the verbs that stop, kill and start one node (for nemesis
// steps).

package vendormock

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tcexec "github.com/testcontainers/testcontainers-go/exec"
	"github.com/testcontainers/testcontainers-go/wait"
)

// ClusterReadyTimeout bounds each cluster node's startup wait: three
// nodes boot at once, and a peer waits for the seed, so on a loaded 2-core
// machine a node takes longer than DefaultReadyTimeout.
const ClusterReadyTimeout = 5 * time.Minute

// DeadLetterConfirmTimeout is the lab cluster's
// dead_letter_worker_publisher_confirm_timeout (RabbitMQ's rabbit
// application environment, milliseconds; RabbitMQ's default is 180000,
// 3 min): how long a quorum queue's at-least-once dead-letter worker waits
// for the target queue's confirm before it publishes an unconfirmed dead
// letter again. A target that had no leader (its node down) confirms
// nothing for the copies sent meanwhile, so after the node is back they
// move on the next round: 10 s here instead of 3 min. A shorter round can
// put a copy into the target twice when the target is slower than it to
// confirm; the worker's ledger suppresses such a copy (DUPLICATE).
// docs/deployment.md lists what the lab changes from RabbitMQ's defaults.
const DeadLetterConfirmTimeout = 10 * time.Second

// MaxBrokerNodes bounds Options.BrokerNodes: a lab cluster on a 2-core
// machine; quorum queues want an odd number (3 or 5).
const MaxBrokerNodes = 5

// BrokerNode is one RabbitMQ node of the run. On a single-node stack
// there is one, Alias AliasRabbitMQ.
type BrokerNode struct {
	// Alias is the node's network alias and host name, "rabbitmq-2"
	// (node 1 also answers to AliasRabbitMQ).
	Alias string
	// Name is the Erlang node name, "rabbit@rabbitmq-2", as
	// rabbitmqctl cluster_status lists it.
	Name string
	// AMQPURL is host: amqp://guest:guest@127.0.0.1:PORT/. The port may
	// change when the node is started again (StartBrokerNode updates it).
	AMQPURL string
	// AMQPURLNetwork is network: amqp://guest:guest@rabbitmq-2:5672/.
	AMQPURLNetwork string

	key string // s.containers key
}

// brokerAlias is node i's (0-based) alias on a cluster: "rabbitmq-1"...
func brokerAlias(i int) string { return fmt.Sprintf("%s-%d", AliasRabbitMQ, i+1) }

// clusterCmd writes the run's Erlang cookie (from LAB_ERLANG_COOKIE) to
// $HOME/.erlang.cookie, mode 400, and LAB_RABBITMQ_CONF to
// $HOME/lab.conf, then runs the server with that configuration file. Both
// are written on every start (the old cookie is read-only, hence rm) and
// before the server starts, as Erlang needs. LAB_ERLANG_COOKIE rather
// than RABBITMQ_ERLANG_COOKIE, which 3.10's CLI tools warn about on every
// call. When LAB_RABBITMQ_SEED is set and the node has no data dir yet
// (its first boot), it first waits until the seed accepts AMQP
// connections: a node that joins a seed still upgrading its schema at boot
// fails with schema_integrity_check_failed (seen with 3.10.8).
const clusterCmd = `f="$HOME/.erlang.cookie"; rm -f "$f"; (umask 077; printf '%s' "$LAB_ERLANG_COOKIE" > "$f") && chmod 400 "$f" && ` +
	`printf '%s\n' "$LAB_RABBITMQ_CONF" > "$HOME/lab.conf" || exit 1; ` +
	`if [ -n "$LAB_RABBITMQ_SEED" ] && [ ! -d "$HOME/mnesia/$RABBITMQ_NODENAME" ]; then ` +
	`until (exec 3<>"/dev/tcp/$LAB_RABBITMQ_SEED/5672") 2>/dev/null; do sleep 1; done; fi; ` +
	`RABBITMQ_CONFIG_FILE="$HOME/lab.conf" exec rabbitmq-server`

// clusterConf is node i's rabbitmq.conf: the lab image's own settings
// (guest from any host, AMQP on 5672) and, for every node but the first,
// peer discovery from the classic configuration naming node 1 only, with
// retries: node 1 always boots as the seed and the others join it as soon
// as it answers (RabbitMQ's peer discovery; the same result as
// rabbitmqctl join_cluster, without three CLI calls per node, which take
// ~15 s each on a loaded 2-core machine). Once a node has joined, its data
// dir remembers the cluster and later starts skip peer discovery.
func clusterConf(i int) string {
	conf := "loopback_users = none\nlisteners.tcp.default = 5672\n"
	if i > 0 {
		conf += "cluster_formation.peer_discovery_backend = classic_config\n" +
			"cluster_formation.classic_config.nodes.1 = rabbit@" + brokerAlias(0) + "\n" +
			"cluster_formation.discovery_retry_limit = 180\n" +
			"cluster_formation.discovery_retry_interval = 1000\n"
	}
	return conf
}

// startRabbitMQCluster starts n containers concurrently with one Erlang
// cookie: node 1 boots, nodes 2..n wait for it (clusterCmd), then boot
// and join it by peer discovery (clusterConf). It waits until
// each node logged its startup and node 1 lists all n as running. Quorum
// queues declared afterwards get a member on every node (up to RabbitMQ's
// default initial group size, 3).
func (s *Stack) startRabbitMQCluster(ctx context.Context, image string, n int, t0 time.Time) error {
	cookie := strings.ToUpper(randomHex(16))
	nodes := make([]BrokerNode, n)
	errs := make(chan error, n)
	for i := range n {
		alias := brokerAlias(i)
		aliases := []string{alias}
		if i == 0 {
			aliases = append(aliases, AliasRabbitMQ)
		}
		seed := ""
		if i > 0 {
			seed = brokerAlias(0)
		}
		nodes[i] = BrokerNode{Alias: alias, Name: "rabbit@" + alias, key: alias,
			AMQPURLNetwork: "amqp://guest:guest@" + alias + ":5672/"}
		go func() {
			_, err := s.run(ctx, alias, aliases, testcontainers.ContainerRequest{
				Image:        image,
				ExposedPorts: []string{"5672/tcp"},
				Env: map[string]string{
					"RABBITMQ_NODENAME": "rabbit@" + alias,
					"LAB_ERLANG_COOKIE": cookie,
					"LAB_RABBITMQ_CONF": clusterConf(i),
					"HOME":              "/var/lib/rabbitmq",
					"LAB_RABBITMQ_SEED": seed,
					// An Erlang application parameter: rabbitmq.conf has no key for it in 3.10.
					"RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS": fmt.Sprintf("-rabbit dead_letter_worker_publisher_confirm_timeout %d",
						DeadLetterConfirmTimeout.Milliseconds()),
				},
				Cmd:            []string{"bash", "-c", clusterCmd},
				ConfigModifier: func(c *container.Config) { c.Hostname = alias },
				// Each strategy has its own 60 s default: give both the deadline.
				WaitingFor: wait.ForAll(
					wait.ForLog(rabbitReadyLine).WithStartupTimeout(ClusterReadyTimeout),
					wait.ForListeningPort("5672/tcp").SkipInternalCheck().WithStartupTimeout(ClusterReadyTimeout),
				).WithDeadline(ClusterReadyTimeout),
			})
			errs <- err
		}()
	}
	var first error
	for range n {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		return first
	}
	for i := range nodes {
		s.mu.Lock()
		c := s.containers[nodes[i].key]
		s.mu.Unlock()
		addr, err := hostAddr(ctx, c, "5672/tcp")
		if err != nil {
			return fmt.Errorf("rabbitmq: %w", err)
		}
		nodes[i].AMQPURL = "amqp://guest:guest@" + addr + "/"
	}
	s.mu.Lock()
	s.brokers = nodes
	s.mu.Unlock()
	wctx, cancel := context.WithTimeout(ctx, ClusterReadyTimeout)
	defer cancel()
	if err := s.waitClusterRunning(wctx, 0, n); err != nil {
		return fmt.Errorf("rabbitmq: %w: %w", ErrNotReady, err)
	}
	s.AMQPURL = nodes[0].AMQPURL
	s.AMQPURLNetwork = "amqp://guest:guest@" + AliasRabbitMQ + ":5672/"
	s.AMQPURLsNetwork = joinNetworkURLs(nodes)
	s.logf("rabbitmq: cluster of %d nodes (%s seed)", n, nodes[0].Name)
	s.markReady("rabbitmq", t0)
	return nil
}

func joinNetworkURLs(nodes []BrokerNode) string {
	urls := make([]string, len(nodes))
	for i, n := range nodes {
		urls[i] = n.AMQPURLNetwork
	}
	return strings.Join(urls, ",")
}

// Brokers returns a copy of the run's RabbitMQ nodes, in order (node 1
// first): one on a single-node stack, Options.BrokerNodes on a cluster.
func (s *Stack) Brokers() []BrokerNode {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]BrokerNode(nil), s.brokers...)
}

// broker returns node i (0-based) and its container. Errors: no such node.
func (s *Stack) broker(i int) (BrokerNode, testcontainers.Container, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i < 0 || i >= len(s.brokers) {
		return BrokerNode{}, nil, fmt.Errorf("broker node %d: the run has %d", i+1, len(s.brokers))
	}
	b := s.brokers[i]
	c := s.containers[b.key]
	if c == nil {
		return BrokerNode{}, nil, fmt.Errorf("broker node %d: no container", i+1)
	}
	return b, c, nil
}

// RabbitMQCtl runs rabbitmqctl -q ARGS in node i's (0-based) container
// (HOME=/var/lib/rabbitmq, so it finds the cookie) and returns its
// output. Errors: no such node, Docker errors, a non-zero exit (with the
// output).
func (s *Stack) RabbitMQCtl(ctx context.Context, i int, args ...string) (string, error) {
	_, c, err := s.broker(i)
	if err != nil {
		return "", err
	}
	cmd := append([]string{"rabbitmqctl", "-q"}, args...)
	code, r, err := c.Exec(ctx, cmd, tcexec.Multiplexed(), tcexec.WithEnv([]string{"HOME=/var/lib/rabbitmq"}))
	var out []byte
	if r != nil {
		out, _ = io.ReadAll(r)
	}
	if err != nil {
		return string(out), fmt.Errorf("rabbitmqctl %s: %w", strings.Join(args, " "), err)
	}
	if code != 0 {
		return string(out), fmt.Errorf("rabbitmqctl %s: exit %d: %s", strings.Join(args, " "), code, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// RunningBrokerNodes returns the Erlang names of the nodes node i (0-based)
// sees running in the cluster (rabbitmqctl cluster_status), sorted as
// RabbitMQ prints them. Errors: as RabbitMQCtl, or unreadable output.
func (s *Stack) RunningBrokerNodes(ctx context.Context, i int) ([]string, error) {
	out, err := s.RabbitMQCtl(ctx, i, "cluster_status", "--formatter", "json")
	if err != nil {
		return nil, err
	}
	var st struct {
		Running []string `json:"running_nodes"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		return nil, fmt.Errorf("cluster_status: %w: %q", err, out)
	}
	return st.Running, nil
}

// waitClusterRunning polls node i until it sees n running nodes or ctx
// ends.
func (s *Stack) waitClusterRunning(ctx context.Context, i, n int) error {
	var last []string
	var lastErr error
	for {
		last, lastErr = s.RunningBrokerNodes(ctx, i)
		if lastErr == nil && len(last) == n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster of %d: running %v (last error: %v): %w", n, last, lastErr, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// StopBrokerNode stops node i (0-based) gracefully: SIGTERM, SIGKILL after
// timeout (0 = 10 s). Its data survives for StartBrokerNode. Errors: no
// such node, Docker errors.
func (s *Stack) StopBrokerNode(ctx context.Context, i int, timeout time.Duration) error {
	b, c, err := s.broker(i)
	if err != nil {
		return fmt.Errorf("stop broker: %w", err)
	}
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	t0 := time.Now()
	if err := c.Stop(ctx, &timeout); err != nil {
		return fmt.Errorf("stop broker %s: %w", b.Name, err)
	}
	s.logf("%s stopped in %.1f s", b.Name, time.Since(t0).Seconds())
	return nil
}

// KillBrokerNode kills node i (0-based) with SIGKILL, as a crash or a lost
// machine, and returns once the container has exited. Its data survives
// for StartBrokerNode. Errors: no such node, Docker errors.
func (s *Stack) KillBrokerNode(ctx context.Context, i int) error {
	b, c, err := s.broker(i)
	if err != nil {
		return fmt.Errorf("kill broker: %w", err)
	}
	cli, err := s.dockerClient(ctx)
	if err != nil {
		return fmt.Errorf("kill broker %s: %w", b.Name, err)
	}
	if _, err := cli.ContainerKill(ctx, c.GetContainerID(), client.ContainerKillOptions{Signal: "KILL"}); err != nil {
		return fmt.Errorf("kill broker %s: %w", b.Name, err)
	}
	for {
		st, err := c.State(ctx)
		if err != nil {
			return fmt.Errorf("kill broker %s: %w", b.Name, err)
		}
		if !st.Running {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kill broker %s: %w", b.Name, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	s.logf("%s killed (SIGKILL)", b.Name)
	return nil
}

// StartBrokerNode starts a stopped or killed node i (0-based) again and
// returns once it logged its startup once more (a cluster node logs it
// after it has synced with the running peers) and the host can open an
// AMQP connection to it, bounded by ClusterReadyTimeout. Its host AMQPURL may change (Brokers, and the
// Stack's AMQPURL for node 1, are updated). When several nodes are down
// (a whole-cluster restart), start them concurrently: a node waits for its
// peers before it completes its startup. Errors: no such node, ErrNotReady,
// Docker errors.
func (s *Stack) StartBrokerNode(ctx context.Context, i int) error {
	b, c, err := s.broker(i)
	if err != nil {
		return fmt.Errorf("start broker: %w", err)
	}
	before, err := countLogLines(ctx, c, rabbitReadyLine)
	if err != nil {
		return fmt.Errorf("start broker %s: %w", b.Name, err)
	}
	t0 := time.Now()
	if err := c.Start(ctx); err != nil {
		return fmt.Errorf("start broker %s: %w", b.Name, err)
	}
	rctx, cancel := context.WithTimeout(ctx, ClusterReadyTimeout)
	defer cancel()
	if err := wait.ForLog(rabbitReadyLine).WithOccurrence(before+1).
		WithStartupTimeout(ClusterReadyTimeout).WaitUntilReady(rctx, c); err != nil {
		return fmt.Errorf("start broker %s: %w: %w", b.Name, ErrNotReady, err)
	}
	addr, err := hostAddr(rctx, c, "5672/tcp")
	if err != nil {
		return fmt.Errorf("start broker %s: %w", b.Name, err)
	}
	url := "amqp://guest:guest@" + addr + "/"
	if err := waitAMQP(rctx, url); err != nil {
		return fmt.Errorf("start broker %s: %w: %w", b.Name, ErrNotReady, err)
	}
	s.mu.Lock()
	s.brokers[i].AMQPURL = url
	if i == 0 {
		s.AMQPURL = url
	}
	s.mu.Unlock()
	s.logf("%s started in %.1f s", b.Name, time.Since(t0).Seconds())
	return nil
}
