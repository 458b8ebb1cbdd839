package vendormock

import (
	"context"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
	"github.com/testcontainers/testcontainers-go"
)

// HostAddr returns "127.0.0.1:PORT" of a published container port ("443/tcp"),
// for packages that start containers of their own beside a Stack
// (vendormock/pagesite). Errors: Docker's.
func HostAddr(ctx context.Context, c testcontainers.Container, port string) (string, error) {
	return hostAddr(ctx, c, port)
}

// AddLatencyToxics adds the latency toxics of one RTT of rttMS to p, as
// SetRTT does on the vendor proxy: SplitRTT's downstream and upstream
// halves as ToxicLatencyDown and ToxicLatencyUp, no jitter (a zero half
// adds nothing). Errors: Toxiproxy's API.
func AddLatencyToxics(p *toxiproxy.Proxy, rttMS int) error {
	return addLatencyToxics(p, rttMS)
}
