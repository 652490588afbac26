package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Walking directories and reading files: what the loader reads, in which
// order, within which limits.

// walk adds the units a path stands for: what Expand makes of it, the file
// itself, or the manifest files below a directory in lexical order, skipping
// hidden files and directories.
//
// What it reads stays within the input's Root: a link found in a directory,
// or a file named as input, that leads out of it is reported, not read.
func (l *Loader) walk(root string, add func(unit)) {
	info, err := os.Stat(root)
	if err != nil {
		add(problem(root, err))
		return
	}
	confine, err := Root(root)
	if err != nil {
		add(problem(root, err))
		return
	}
	if !info.IsDir() {
		if err := Confine(confine, root); err != nil {
			add(unit{path: root, count: true, errors: []Error{{File: root, Message: err.Error()}}})
			return
		}
	}
	if l.expand(root, info, confine, add) {
		return
	}
	if !info.IsDir() {
		add(unit{path: root, read: true, count: true})
		return
	}
	walkRoot := root
	if li, err := os.Lstat(root); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		// WalkDir does not follow a link it starts from; with a trailing
		// separator the link is resolved, and paths still start with root.
		walkRoot = root + string(filepath.Separator)
	}
	err = filepath.WalkDir(walkRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			add(problem(path, err))
			return nil
		}
		if path == walkRoot {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		skip := l.Skip != nil && l.Skip(path)
		if d.IsDir() {
			if !skip && l.expandEntry(path, d, confine, add) {
				return filepath.SkipDir
			}
			return nil
		}
		if !skip && d.Type()&fs.ModeSymlink != 0 {
			if err := Confine(confine, path); err != nil {
				add(unit{path: path, count: true, errors: []Error{{File: path, Message: err.Error()}}})
				return nil
			}
		}
		if skip || l.expandEntry(path, d, confine, add) || !hasExtension(path) {
			return nil
		}
		add(unit{path: path, read: true, count: true})
		return nil
	})
	if err != nil {
		add(problem(root, err))
	}
}

// expand asks Expand about path and adds what it made; it reports whether
// the path is done with.
func (l *Loader) expand(path string, info fs.FileInfo, root string, add func(unit)) bool {
	if l.Expand == nil {
		return false
	}
	docs, handled, err := l.Expand(path, info, root)
	switch {
	case err != nil:
		add(unit{path: path, count: true, errors: []Error{{File: path, Message: err.Error()}}})
		return true
	case handled:
		add(unit{path: path, count: true, docs: docs})
		return true
	}
	return false
}

func (l *Loader) expandEntry(path string, d fs.DirEntry, root string, add func(unit)) bool {
	if l.Expand == nil {
		return false
	}
	info, err := d.Info()
	if err != nil {
		add(problem(path, err))
		return true
	}
	return l.expand(path, info, root, add)
}

func hasExtension(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	for _, e := range Extensions {
		if ext == e {
			return true
		}
	}
	return false
}

func describe(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func (l *Loader) max() int64 {
	if l.MaxFileSize > 0 {
		return l.MaxFileSize
	}
	return DefaultMaxFileSize
}

func (l *Loader) readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, errors.New(describe(err))
	}
	defer func() { _ = f.Close() }() // read-only: a close error loses nothing
	var size int64
	if info, err := f.Stat(); err == nil {
		if size = info.Size(); size > l.max() {
			return nil, fmt.Errorf("file is too large (%d bytes; the limit is %d, see --max-file-size)", size, l.max())
		}
	}
	return l.readAll(f, size)
}

// readAll reads r whole, up to the size limit; size, when known, saves
// growing the buffer as the data comes. The buffer is one a file was read
// into before when one is free and large enough (release).
func (l *Loader) readAll(r io.Reader, size int64) ([]byte, error) {
	if r == nil {
		return nil, errors.New("no standard input")
	}
	var buf []byte
	if p, _ := buffers.Get().(*[]byte); p != nil && cap(*p) >= int(size)+bytes.MinRead {
		buf = (*p)[:0]
	}
	b := bytes.NewBuffer(buf)
	b.Grow(int(size) + bytes.MinRead) // room for the data and the read that finds its end
	if _, err := b.ReadFrom(io.LimitReader(r, l.max()+1)); err != nil {
		return nil, fmt.Errorf("reading: %w", err)
	}
	data := b.Bytes()
	if int64(len(data)) > l.max() {
		return nil, fmt.Errorf("input is too large (more than %d bytes, see --max-file-size)", l.max())
	}
	return data, nil
}

// buffers holds the buffers files were read into, once parsed, for the
// files read next: what the parsers return keeps none of the bytes they
// read (TestParseKeepsNoInput), and reading into a buffer used a moment
// ago spares allocating, zeroing and bringing into the cache a new one.
var buffers sync.Pool

// release gives a file's buffer, parsed, to the next file read; not one of
// more than maxKept bytes, which would hold its memory for the run.
func release(data []byte) {
	if data != nil && cap(data) <= maxKept {
		buffers.Put(&data)
	}
}
