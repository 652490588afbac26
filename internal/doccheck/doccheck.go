// Package doccheck finds the shell blocks of the project's documents, so
// that tests run them as a user would and compare the output the documents
// show. A block that no test runs says why on its first line:
//
//	# not run: the paths stand for your own files
//
// and a block that needs what only one test sets up (a module proxy, a
// release build) names that test:
//
//	# run by TestGoInstall: the module comes from a local proxy
//
// A ```text block right after a shell block is the output it shows: every
// line of it but "..." (an elision, however indented) must come out, in
// that order, and its first line first unless it begins with "...".
package doccheck

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
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
	// RunBy blocks name, on their first line, the test that runs them.
	RunBy Kind = "run by"
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
	// Test is the test that runs a RunBy block.
	Test string
}

func (b Block) String() string { return fmt.Sprintf("%s:%d", b.File, b.Line) }

var (
	notRun = regexp.MustCompile(`^# not run: (.+)$`)
	runBy  = regexp.MustCompile(`^# run by (Test\w+): (.+)$`)
)

// Documents are the documents whose shell blocks are checked: README.md,
// CONTRIBUTING.md, docs/*.md and every README under examples/.
func Documents(root string) ([]string, error) {
	var out []string
	for _, pattern := range []string{"README.md", "CONTRIBUTING.md", "docs/*.md"} {
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
				if m := runBy.FindStringSubmatch(lines[0]); m != nil {
					cur.Test, cur.Why = m[1], m[2]
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
	if len(lines) > 0 && runBy.MatchString(lines[0]) {
		return RunBy
	}
	for _, l := range lines {
		if strings.Contains(l, "emulator") && strings.Contains(l, " up") {
			return Emulator
		}
	}
	return Static
}

// ShowsOutput reports whether got contains every line of want but "...",
// in order; it returns the first line it misses. Inside a line, "..."
// stands for any text of that line: a node name, an address, a time.
func ShowsOutput(want, got string) (missing string, ok bool) {
	// Unless it begins with an elision, the output shown begins where the
	// output does.
	first := strings.TrimSpace(strings.SplitN(strings.TrimLeft(want, "\n"), "\n", 2)[0])
	if loc := linePattern(first).FindStringIndex(strings.TrimLeft(got, "\n")); first != "..." && (loc == nil || loc[0] != 0) {
		return first, false
	}
	rest := got
	for _, l := range strings.Split(strings.TrimRight(want, "\n"), "\n") {
		if t := strings.TrimSpace(l); t == "..." || t == "" {
			continue
		}
		loc := linePattern(l).FindStringIndex(rest)
		if loc == nil {
			return l, false
		}
		rest = rest[loc[1]:]
	}
	return "", true
}

// linePattern matches a line of shown output, "..." in it matching any text
// of the line.
func linePattern(line string) *regexp.Regexp {
	parts := strings.Split(line, "...")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(strings.Join(parts, `[^\n]*?`))
}

// runElsewhere are commands of the documents that another part of CI runs:
// running them here would run CI inside CI.
var runElsewhere = map[string]string{
	"make test":         ".ci/run runs it",
	"make controlplane": "hack/test.sh builds the control plane before the tests",
}

// BlocksRunBy returns the blocks of the documents under root that name test
// as the one that runs them.
func BlocksRunBy(root, test string) ([]Block, error) {
	all, err := Blocks(root)
	var out []Block
	for _, b := range all {
		if b.Kind == RunBy && b.Test == test {
			out = append(out, b)
		}
	}
	return out, err
}

// Run runs blocks (one, or the blocks of a document in order, in one
// shell) as a user would, in dir, with bash: every command as written,
// except those of runElsewhere. A command whose last line has a comment
// beginning "fails" is expected to fail. It returns the output and the
// commands that failed, each named by its document and line: any non-zero
// exit, but exit code 1 of fargatekit (findings, which the documents show
// on purpose).
func Run(blocks []Block, dir string, env []string) (output string, failed []string) {
	var script strings.Builder
	where := map[int]string{} // script line → document:line
	n := 0
	add := func(l, at string) {
		n++
		script.WriteString(l + "\n")
		if at != "" {
			where[n] = at
		}
	}
	add("set -o pipefail", "")
	add("shopt -s expand_aliases", "")
	add(`trap 'echo "FAILED $? at line $LINENO: $BASH_COMMAND" >&2' ERR`, "")
	for _, b := range blocks {
		for i, l := range strings.Split(strings.TrimRight(b.Text, "\n"), "\n") {
			cmd, comment, _ := strings.Cut(l, "#")
			if why, ok := runElsewhere[strings.TrimSpace(cmd)]; ok {
				l = ": " + strings.TrimSpace(cmd) + " — " + why
			} else if strings.HasPrefix(strings.TrimSpace(comment), "fails") {
				l = cmd + " || echo 'failed, as the document says'"
			}
			add(l, fmt.Sprintf("%s:%d", b.File, b.Line+1+i))
		}
	}
	c := exec.Command("bash", "-c", script.String())
	c.Dir, c.Env = dir, env
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	_ = c.Run()
	for _, l := range strings.Split(errOut.String(), "\n") {
		m := failedLine.FindStringSubmatch(l)
		if m == nil || (m[1] == "1" && fargatekitCommand.MatchString(m[3])) {
			continue
		}
		line, _ := strconv.Atoi(m[2])
		failed = append(failed, fmt.Sprintf("%s: exit %s: %s", where[line], m[1], m[3]))
	}
	return out.String() + errOut.String(), failed
}

var (
	failedLine        = regexp.MustCompile(`^FAILED (\d+) at line (\d+): (.*)$`)
	fargatekitCommand = regexp.MustCompile(`^(bin/)?fargatekit (check|plan|scan|upgrade check)( |$)`)
)

// Workspace returns a directory that looks like the repository's root to the
// commands of the documents (a link to each of its entries, but bin/), so
// that what they write lands there and not in the repository.
func Workspace(dir, root string) (string, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		if e.Name() == "bin" || e.Name() == ".git" {
			continue
		}
		if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			return "", err
		}
	}
	return dir, nil
}
