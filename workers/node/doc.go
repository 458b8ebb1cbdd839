// Package node holds the Node.js reference worker (main.js, src/) and its
// image (Dockerfile). The Go test runs its unit tests with `node --test`.
package node
