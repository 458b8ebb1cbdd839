package lab

import (
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// Records follows a worker's records file while the worker appends to it
// (records.Tail) and keeps every record read so far.
type Records struct {
	path string
	t    *records.Tail
	all  []records.Record
}

// NewRecords follows the records file at path (it may not exist yet).
func NewRecords(path string) *Records { return &Records{path: path, t: records.NewTail(path)} }

// Path is the records file's path.
func (r *Records) Path() string { return r.path }

// Poll reads the records appended since the last Poll. Errors: the file
// cannot be read, or records.ErrMalformedLine (the records before the bad
// line are kept).
func (r *Records) Poll() error {
	recs, err := r.t.Poll()
	r.all = append(r.all, recs...)
	return err
}

// All returns every record read so far, in file order.
func (r *Records) All() []records.Record { return r.all }

// Len is the number of records read so far.
func (r *Records) Len() int { return len(r.all) }

// Last returns the last record read; ok is false when there is none.
func (r *Records) Last() (rec records.Record, ok bool) {
	if len(r.all) == 0 {
		return records.Record{}, false
	}
	return r.all[len(r.all)-1], true
}

// Counts returns the records read so far by outcome.
func (r *Records) Counts() map[outcome.Outcome]int {
	m := map[outcome.Outcome]int{}
	for _, rec := range r.all {
		m[rec.Outcome]++
	}
	return m
}
