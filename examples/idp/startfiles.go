package main

import (
	"os"
	"strings"

	"github.com/visid/visid/store/sqlstore"
)

// newFiles are the files of a SQLite store that did not exist before a start: the database,
// its key file and SQLite's companions. A start that fails removes those it made, so a
// mistake (a taken port) leaves no empty store or key behind; files that were there stay.
type newFiles []string

// filesNotYetThere returns the files of store db that do not exist now; none for a store that
// is not a SQLite file.
func filesNotYetThere(db string) newFiles {
	path, ok := strings.CutPrefix(db, "sqlite:")
	if !ok || sqlstore.InMemory(db) {
		return nil
	}
	path, _, _ = strings.Cut(path, "?")
	var out newFiles
	for _, p := range []string{path, path + ".key", path + "-wal", path + "-shm", path + "-journal"} {
		if _, err := os.Lstat(p); os.IsNotExist(err) {
			out = append(out, p)
		}
	}
	return out
}

// remove deletes those of f that exist now: the start made them.
func (f newFiles) remove() {
	for _, p := range f {
		_ = os.Remove(p) // a file the start did not make is missing: nothing to do
	}
}
