// Package doccheck finds the shell blocks of the project's documents, so
// that tests run them as a user would and compare the output the documents
// show. A block that no test runs says why on its first line:
//
//	# not run: the paths stand for your own files
//
// A ```text block right after a shell block is the output it shows: every
// line of it but "..." (an elision, however indented) must come out, in
// that order, and its first line first unless it begins with "...".
package doccheck

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Kind says which test runs a block.
type Kind string

// The kinds of block.
const (
	// Static blocks run in the unit tests: fargatekit and make on the
	// repository's files.
	Static Kind = "static"
	// Emulator blocks start an emulator: the integration suite runs them,
	// in document order, on the control plane.
	Emulator Kind = "emulator"
	// NotRun blocks say why on their first line.
	NotRun Kind = "not run"
)

// Block is one shell block of a document.
type Block struct {
	File string // relative to the repository
	Line int    // of the opening fence
	Text string
	// Output is the output the document shows for it, "" when none.
	Output string
	Kind   Kind
	// Why is the reason a NotRun block gives.
	Why string
}

func (b Block) String() string { return fmt.Sprintf("%s:%d", b.File, b.Line) }

var notRun = regexp.MustCompile(`^# not run: (.+)$`)

// Documents are the documents whose shell blocks are checked: README.md,
// docs/*.md and every README under examples/.
func Documents(root string) ([]string, error) {
	var out []string
	for _, pattern := range []string{"README.md", "docs/*.md"} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			return nil, err
		}
		out = append(out, m...)
	}
	err := filepath.WalkDir(filepath.Join(root, "examples"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "README.md" {
			out = append(out, path)
		}
		return err
	})
	for i := range out {
		out[i], _ = filepath.Rel(root, out[i])
	}
	sort.Strings(out)
	return out, err
}

// Blocks returns the shell blocks of the documents under root, in document order.
func Blocks(root string) ([]Block, error) {
	docs, err := Documents(root)
	if err != nil {
		return nil, err
	}
	var out []Block
	for _, doc := range docs {
		bs, err := parse(root, doc)
		if err != nil {
			return nil, err
		}
		out = append(out, bs...)
	}
	return out, nil
}

func parse(root, doc string) ([]Block, error) {
	f, err := os.Open(filepath.Join(root, doc))
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var (
		out   []Block
		cur   *Block
		lang  string
		lines []string
		last  = -1 // the shell block a text block may show the output of
	)
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		fence := strings.HasPrefix(l, "```")
		switch {
		case fence && cur == nil:
			lang = strings.TrimPrefix(l, "```")
			cur, lines = &Block{File: doc, Line: n}, nil
		case fence:
			text := strings.Join(lines, "\n") + "\n"
			switch lang {
			case "sh":
				cur.Text = text
				cur.Kind = kind(lines)
				if m := notRun.FindStringSubmatch(lines[0]); m != nil {
					cur.Why = m[1]
				}
				out = append(out, *cur)
				last = len(out) - 1
			case "text":
				if last < 0 || out[last].Output != "" {
					return nil, fmt.Errorf("%s:%d: a text block shows the output of the shell block before it, and there is none", doc, cur.Line)
				}
				out[last].Output = text
			default:
				last = -1
			}
			cur = nil
		case cur != nil:
			lines = append(lines, l)
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: the block is not closed", doc, cur.Line)
	}
	return out, sc.Err()
}

func kind(lines []string) Kind {
	if len(lines) > 0 && notRun.MatchString(lines[0]) {
		return NotRun
	}
	for _, l := range lines {
		if strings.Contains(l, "emulator") && strings.Contains(l, " up") {
			return Emulator
		}
	}
	return Static
}

// ShowsOutput reports whether got contains every line of want but "...",
// in order; it returns the first line it misses.
func ShowsOutput(want, got string) (missing string, ok bool) {
	// Unless it begins with an elision, the output shown begins where the
	// output does.
	first := strings.TrimSpace(strings.SplitN(strings.TrimLeft(want, "\n"), "\n", 2)[0])
	if first != "..." && !strings.HasPrefix(strings.TrimLeft(got, "\n"), first) {
		return first, false
	}
	rest := got
	for _, l := range strings.Split(strings.TrimRight(want, "\n"), "\n") {
		if t := strings.TrimSpace(l); t == "..." || t == "" {
			continue
		}
		i := strings.Index(rest, l)
		if i < 0 {
			return l, false
		}
		rest = rest[i+len(l):]
	}
	return "", true
}
