package reports

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// FileJournal appends each Record as one JSON line to a file, synced before
// Keep returns. Safe for concurrent use.
type FileJournal struct {
	mu sync.Mutex
	f  *os.File
}

// OpenJournal opens (creates, mode 0600; the folder 0700) the journal at
// path for appending. Errors: the file cannot be opened.
func OpenJournal(path string) (*FileJournal, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open report journal: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open report journal: %w", err)
	}
	return &FileJournal{f: f}, nil
}

// Keep appends r and syncs the file. Errors: a failed write or sync.
func (j *FileJournal) Keep(_ context.Context, r Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode report record: %w", err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := j.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write report journal: %w", err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("sync report journal: %w", err)
	}
	return nil
}

// Close closes the file.
func (j *FileJournal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.f.Close()
}
