package spool

import (
	"errors"
	"os"
	"runtime"
)

// temp is the temporary file of a spool, created on first use. Where the
// system lets an open file be removed, it is removed at once: unnamed, it
// goes with the process however it ends (Windows keeps the name of an open
// file: close removes it there).
type temp struct {
	file *os.File
	// removed is true when the file's name is gone.
	removed bool
}

// create creates the file, unless it exists.
func (t *temp) create(dir, pattern string) error {
	if t.file != nil {
		return nil
	}
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return err
	}
	t.file, t.removed = f, runtime.GOOS != "windows" && os.Remove(f.Name()) == nil
	return nil
}

// where names the file in errors: its name, or, once removed, what it is.
func (t *temp) where() string {
	switch {
	case t.file == nil:
		return "no file"
	case t.removed:
		return "a temporary file (" + t.file.Name() + ", removed)"
	}
	return t.file.Name()
}

// close closes the file and removes it, if it was created.
func (t *temp) close() error {
	if t.file == nil {
		return nil
	}
	err := t.file.Close()
	if !t.removed {
		err = errors.Join(err, os.Remove(t.file.Name()))
	}
	t.file = nil
	return err
}
