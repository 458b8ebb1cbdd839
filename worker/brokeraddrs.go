package worker

import (
	"fmt"
	"strings"
	"sync/atomic"

	amqp "github.com/rabbitmq/amqp091-go"
)

// AMQPURLs splits Config.AMQPURL, one URL or a comma-separated list of the
// nodes of one RabbitMQ cluster ("amqp://u:p@rabbit-1:5672/,amqp://u:p@rabbit-2:5672/"),
// into its URLs, spaces trimmed and empty items dropped. A comma inside a
// password must be percent-encoded (%2C), as anything reserved in a URL.
func AMQPURLs(list string) []string {
	var urls []string
	for u := range strings.SplitSeq(list, ",") {
		if u = strings.TrimSpace(u); u != "" {
			urls = append(urls, u)
		}
	}
	return urls
}

// validAMQPURLs checks that list holds at least one URL and that each
// parses as an AMQP URI; the error names the item by position, password
// redacted.
func validAMQPURLs(list string) error {
	urls := AMQPURLs(list)
	if len(urls) == 0 {
		return fmt.Errorf("amqp url: empty")
	}
	for i, u := range urls {
		if _, err := amqp.ParseURI(u); err != nil {
			return fmt.Errorf("amqp url %d of %d (%s): %w", i+1, len(urls), RedactURL(u), err)
		}
	}
	return nil
}

// redactAMQPURLs is RedactURL applied to every URL of the list.
func redactAMQPURLs(list string) string {
	urls := AMQPURLs(list)
	for i, u := range urls {
		urls[i] = RedactURL(u)
	}
	return strings.Join(urls, ",")
}

// brokerAddrs hands out the broker URLs in turn: every session the
// consumer opens (the first, and each one after a failed dial or a lost
// session) takes the next URL of the list, wrapping around, so when its
// node goes the worker reconnects to another one. With one URL it is
// always that one. The zero value is ready; safe for concurrent use.
type brokerAddrs struct{ n atomic.Uint64 }

// next returns the URL to dial now from list (Config.AMQPURL) and its
// position (0-based). list must hold at least one URL (Config.Validate).
func (b *brokerAddrs) next(list string) (string, int) {
	urls := AMQPURLs(list)
	if len(urls) == 0 {
		return list, 0
	}
	i := int((b.n.Add(1) - 1) % uint64(len(urls)))
	return urls[i], i
}
