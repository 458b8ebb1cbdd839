// Package python holds the Python contract worker (main.py, notifier/):
// Debian's python3-pika with one third-party HTTP client per CLIENT_MODE
// (requests per send, one requests.Session, one httpx.Client), and its
// image (Dockerfile). The Go test runs its unit tests with python3's
// unittest; README.md names each client's defaults and their sources.
package python
