package ledger

import (
	"bytes"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// maxBegun bounds begunCache: attempts whose Finish never came (a crash
// path, a failed ledger) are forgotten all at once past it.
const maxBegun = 1024

// begunCache keeps, for each attempt this Ledger's Begin wrote and its
// Finish has not closed yet, the exact value written and the Entry it
// encodes. Finish reads the stored value as always and, when it is byte
// for byte the one kept, takes the kept Entry instead of decoding the
// JSON again: the decode (and the stack growth it caused in bbolt's
// batch goroutine) was about a sixth of the worker's own CPU per message
// and sat inside the transaction the next message's Begin waits for
// (docs/worker.md, Cost per message). Any other value (an operator's
// Resolve, another process, a replaced file) is decoded as before: the
// file stays the only authority.
type begunCache struct {
	mu sync.Mutex
	m  map[string]begunValue
}

type begunValue struct {
	raw   []byte
	entry Entry
}

// keep records raw (the value Begin put for refkey) and e. Past maxBegun
// open attempts it starts over (a Finish then decodes, as without it).
func (c *begunCache) keep(refkey string, raw []byte, e Entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxBegun {
		c.m = make(map[string]begunValue)
	}
	c.m[refkey] = begunValue{raw: raw, entry: e}
}

// drop forgets refkey's kept value (its Finish is over, or its Begin failed).
func (c *begunCache) drop(refkey string) {
	c.mu.Lock()
	delete(c.m, refkey)
	c.mu.Unlock()
}

// get is the package's get, without the decode when the stored value is
// byte for byte the one kept for refkey.
func (c *begunCache) get(b *bolt.Bucket, refkey string) (Entry, bool, error) {
	if v := b.Get([]byte(refkey)); v != nil {
		c.mu.Lock()
		kept, ok := c.m[refkey]
		c.mu.Unlock()
		if ok && bytes.Equal(kept.raw, v) {
			return kept.entry, true, nil
		}
	}
	return get(b, refkey)
}
