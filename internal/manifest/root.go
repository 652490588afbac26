package manifest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The inputs of a check may come from anyone: a pull request's charts and
// manifests, checked in CI. A symbolic link among them must not make
// fargatekit read, and print in an error, a file of the machine it runs on
// (/etc/passwd, a runner's credentials). What is read from an input stays
// within its root: the repository the input is in (the nearest directory
// above it with a .git), else the input itself.

// Root returns the root of input: the absolute path, symbolic links
// resolved, of the nearest directory at or above input that holds .git (a
// directory, or the file of a worktree), else of input itself when it is a
// directory, else of the directory input is in. A directory named as input
// is trusted even through a link (the one who runs the check named it); a
// file is not: its root is found from the directory it is named in.
func Root(input string) (string, error) {
	abs, err := filepath.Abs(input)
	if err != nil {
		return "", err
	}
	info, err := os.Stat(abs)
	if err != nil {
		return "", err
	}
	if !info.IsDir() {
		abs = filepath.Dir(abs)
	}
	start, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	for dir := start; ; {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return start, nil
		}
		dir = parent
	}
}

// Inside reports whether path, its symbolic links resolved, is root or below
// it; root is as Root returns it. A path that does not resolve (a dangling
// link, a loop) is an error.
func Inside(root, path string) (bool, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false, err
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return false, err
	}
	rel, err := filepath.Rel(root, resolved)
	if err != nil {
		return false, nil
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)), nil
}

// OutsideError is the error for a link that leads out of its input's root.
// It names the link and the root, not where the link leads, and nothing of
// what is there.
type OutsideError struct {
	Path string // the link, or the path through it, as found
	Root string
}

func (e *OutsideError) Error() string {
	return fmt.Sprintf("%s is a symbolic link, or is reached through one, to a path outside %s: not read", e.Path, e.Root)
}

// Confine returns an *OutsideError when path leads out of root, or the
// error resolving it; nil when it stays inside.
func Confine(root, path string) error {
	ok, err := Inside(root, path)
	switch {
	case err != nil: // where a dangling link leads is not said either
		return fmt.Errorf("%s cannot be resolved: %s", path, describe(err))
	case !ok:
		return &OutsideError{Path: path, Root: root}
	}
	return nil
}
