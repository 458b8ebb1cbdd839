// Command goclient is Go's http.Post with the default client, for
// ./run.sh client-defaults (scenarios/defaults): the lab builds it static
// and copies it into the client container. The environment gives URL,
// TOKEN, PREFIX, CALLS and INFLIGHT (calls in flight at once); the lab CA
// comes from SSL_CERT_FILE, which crypto/x509 reads on Linux, so the
// client stays http.DefaultClient. Each call reads the whole answer and
// closes its body (what lets net/http reuse the connection). Prints one
// JSON line: per-call ms, wall ms, errors and the Go version.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

type output struct {
	MS         []float64 `json:"ms"`
	WallMS     float64   `json:"wall_ms"`
	Errors     int       `json:"errors"`
	FirstError string    `json:"first_error"`
	Version    string    `json:"version"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "goclient:", err)
		os.Exit(1)
	}
}

func run() error {
	url, token, prefix := os.Getenv("URL"), os.Getenv("TOKEN"), os.Getenv("PREFIX")
	calls, err := strconv.Atoi(os.Getenv("CALLS"))
	if err != nil || calls < 1 {
		return fmt.Errorf("read CALLS: %q is not a whole number >= 1", os.Getenv("CALLS"))
	}
	inflight, err := strconv.Atoi(os.Getenv("INFLIGHT"))
	if err != nil || inflight < 1 {
		inflight = 1
	}
	ms := make([]float64, calls)
	var mu sync.Mutex
	out := output{Version: runtime.Version() + ", http.DefaultClient (DefaultTransport)"}
	next := 0
	start := time.Now()
	var wg sync.WaitGroup
	for range inflight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if next >= calls {
					mu.Unlock()
					return
				}
				next++
				n := next
				mu.Unlock()
				d, err := call(url, token, fmt.Sprintf("%s-%d", prefix, n))
				mu.Lock()
				if err != nil {
					out.Errors++
					if out.FirstError == "" {
						out.FirstError = err.Error()
					}
					ms[n-1] = -1
				} else {
					ms[n-1] = float64(d.Microseconds()) / 1000
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	out.WallMS = float64(time.Since(start).Microseconds()) / 1000
	for _, v := range ms {
		if v >= 0 {
			out.MS = append(out.MS, v)
		}
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}

// call POSTs one message with http.Post (http.DefaultClient) and reads the
// whole answer.
func call(url, token, ref string) (time.Duration, error) {
	body := fmt.Sprintf(`{"refkey":%q,"to":"01000000000","template":"defaults","text":"client defaults"}`, ref)
	start := time.Now()
	// http.Post cannot set headers, so this is http.Post's own body:
	// NewRequest, then DefaultClient.Do.
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("X-Refkey", ref)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("post: %w", err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return 0, fmt.Errorf("read answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("post: status %d", resp.StatusCode)
	}
	return time.Since(start), nil
}
