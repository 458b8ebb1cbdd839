package worker

import (
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestAMQPURLs(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"amqp://g:p@a:5672/", []string{"amqp://g:p@a:5672/"}},
		{"amqp://g:p@a:5672/, amqp://g:p@b:5672/ ,,", []string{"amqp://g:p@a:5672/", "amqp://g:p@b:5672/"}},
		{" , ", nil},
	}
	for _, tt := range tests {
		if got := AMQPURLs(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("AMQPURLs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestConfigAMQPURLList: a list of node URLs validates, a bad item is
// named by position with its password redacted, and the list is redacted
// item by item in String and LogValue.
func TestConfigAMQPURLList(t *testing.T) {
	c := validConfig().WithDefaults()
	c.AMQPURL = "amqp://u:secret1@rabbitmq-1:5672/,amqp://u:secret2@rabbitmq-2:5672/"
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate(list) = %v", err)
	}
	for _, s := range []string{c.String(), c.LogValue().String()} {
		if strings.Contains(s, "secret1") || strings.Contains(s, "secret2") {
			t.Errorf("password printed: %s", s)
		}
		if !strings.Contains(s, "rabbitmq-2") {
			t.Errorf("second node missing: %s", s)
		}
	}
	c.AMQPURL = "amqp://u:secret1@rabbitmq-1:5672/,http://u:secret2@x/"
	err := c.Validate()
	if err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "amqp url 2 of 2") || strings.Contains(err.Error(), "secret2") {
		t.Errorf("Validate(bad second) = %v, want ErrConfig naming item 2 of 2 without its password", err)
	}
	c.AMQPURL = " , "
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "amqp url: empty") {
		t.Errorf("Validate(empty list) = %v", err)
	}
}

// TestOpenDialsNextNode: each session the consumer opens dials the next
// URL of the list, wrapping around, so a worker whose node went reconnects
// to another node. Two TCP listeners stand for two nodes (they accept and
// close, so each open fails after the dial and the test needs no broker).
func TestOpenDialsNextNode(t *testing.T) {
	var urls []string
	accepted := make(chan int, 16)
	for i := range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ln.Close() })
		go func() {
			for {
				conn, err := ln.Accept()
				if err != nil {
					return
				}
				accepted <- i
				_ = conn.Close()
			}
		}()
		urls = append(urls, "amqp://guest:guest@"+ln.Addr().String()+"/")
	}
	d := &amqpDialer{cfg: Config{AMQPURL: strings.Join(urls, ","), DialTimeout: 2 * time.Second, Heartbeat: time.Second}}
	var got []int
	for range 3 {
		if _, err := d.Dial(2); err == nil {
			t.Fatal("open succeeded against a listener that closes")
		}
		select {
		case i := <-accepted:
			got = append(got, i)
		case <-time.After(5 * time.Second):
			t.Fatalf("no node dialled; so far %v", got)
		}
	}
	if want := []int{0, 1, 0}; !slices.Equal(got, want) {
		t.Errorf("nodes dialled %v, want %v", got, want)
	}
}
