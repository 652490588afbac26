package manifest

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/fargatekit/fargatekit/pkg/object"
)

// DefaultMaxFileSize is the largest file read unless the Loader says otherwise.
const DefaultMaxFileSize = 64 << 20

// StdinName is how objects read from standard input name their file.
const StdinName = "<stdin>"

// Error is a problem with the input, at a file and, when known, a line.
type Error struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Message string `json:"message"`
}

func (e Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Message)
}

// Loader reads Kubernetes objects from files, directories and standard input.
type Loader struct {
	// MaxFileSize is the largest file read; 0 means DefaultMaxFileSize.
	MaxFileSize int64
	// Stdin is read for the path "-".
	Stdin io.Reader
	// Skip, if set, is asked about every file and directory found in a
	// directory: a skipped file is not read, a skipped directory is not given
	// to Expand (its files are still asked about). Paths named on the command
	// line are always read.
	Skip func(path string) bool
	// Expand, if set, is asked about every path named on the command line and
	// every directory and file found while walking, before a directory is
	// descended into. When it handles a path (a Helm chart, a kustomization,
	// see internal/render), the documents it returns are parsed in the path's
	// place and a directory is not descended into. An error is reported at the
	// path, which is then not descended into either, and the other inputs are
	// still read.
	Expand func(path string, info fs.FileInfo) (docs []Document, handled bool, err error)
	// OnFile, if set, is called for each file, and each path Expand handled,
	// in input order.
	OnFile func(path string)
	// Workers is how many files are parsed at once; 0 means GOMAXPROCS.
	// Objects and errors are still emitted in input order.
	//
	// Skip and Expand are called on a goroutine of the Loader's, one call at
	// a time, while objects read earlier are emitted.
	Workers int
}

// Document is one file's worth of YAML that Expand made: File is the name
// its objects and problems are reported at.
type Document struct {
	File string
	Data []byte
}

// Extensions are the file endings read from directories.
var Extensions = []string{".yaml", ".yml", ".json"}

// Load reads every path and calls emit for each object and fail for each
// problem, in input order. A problem never stops the other documents or files
// from being read.
func (l *Loader) Load(paths []string, emitObject func(*object.Object), failWith func(Error)) {
	// An input without any object is an error: a failed `helm template` piped
	// in, or the wrong directory, must not pass as "no findings".
	objects, problems := 0, 0
	defer func() {
		if objects == 0 && problems == 0 && len(paths) > 0 {
			failWith(Error{File: strings.Join(paths, " "), Message: "no Kubernetes objects found (read: .yaml, .yml and .json files, Helm charts, kustomizations, or - for standard input)"})
		}
	}()
	emit := func(o *object.Object) { objects++; emitObject(o) }
	fail := func(e Error) { problems++; failWith(e) }
	l.parse(func(add func(unit)) {
		for _, p := range paths {
			if p == "-" {
				add(l.stdin())
				continue
			}
			l.walk(p, add)
		}
	}, emit, fail)
}

// unit is one piece of the loader's work, parsed on a goroutine of its own:
// a file to read, the documents Expand made of a path, or problems.
type unit struct {
	path   string     // the file, or the path Expand handled
	read   bool       // read and parse the file at path
	docs   []Document // parse these
	errors []Error
	count  bool // tell OnFile about path
}

func problem(path string, err error) unit {
	return unit{errors: []Error{{File: path, Message: describe(err)}}}
}

func (l *Loader) stdin() unit {
	data, err := l.readAll(l.Stdin)
	if err != nil {
		return unit{errors: []Error{{File: StdinName, Message: err.Error()}}}
	}
	return unit{docs: []Document{{File: StdinName, Data: data}}}
}

// parsed is what one unit held.
type parsed struct {
	unit    unit
	objects []*object.Object
	errors  []Error
}

func (l *Loader) parseUnit(u unit) parsed {
	r := parsed{unit: u, errors: u.errors}
	emit := func(o *object.Object) { r.objects = append(r.objects, o) }
	fail := func(e Error) { r.errors = append(r.errors, e) }
	if u.read {
		data, err := l.readFile(u.path)
		if err != nil {
			fail(Error{File: u.path, Message: err.Error()})
		} else {
			Parse(u.path, data, emit, fail)
		}
	}
	for _, d := range u.docs {
		Parse(d.File, d.Data, emit, fail)
	}
	return r
}

// parse parses the units produce adds on Workers goroutines and emits their
// objects and errors in input order. produce runs on a goroutine of its own;
// at most Workers units are parsed ahead of the one being emitted, so memory
// does not grow with the number of files.
func (l *Loader) parse(produce func(add func(unit)), emit func(*object.Object), fail func(Error)) {
	workers := l.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	pending := make(chan chan parsed, workers)
	go func() {
		defer close(pending)
		produce(func(u unit) {
			ch := make(chan parsed, 1)
			pending <- ch
			go func() { ch <- l.parseUnit(u) }()
		})
	}()
	for ch := range pending {
		r := <-ch
		if r.unit.count && l.OnFile != nil {
			l.OnFile(r.unit.path)
		}
		for _, o := range r.objects {
			emit(o)
		}
		for _, e := range r.errors {
			fail(e)
		}
	}
}

// walk adds the units a path stands for: what Expand makes of it, the file
// itself, or the manifest files below a directory in lexical order, skipping
// hidden files and directories.
func (l *Loader) walk(root string, add func(unit)) {
	info, err := os.Stat(root)
	if err != nil {
		add(problem(root, err))
		return
	}
	if l.expand(root, info, add) {
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
			if !skip && l.expandEntry(path, d, add) {
				return filepath.SkipDir
			}
			return nil
		}
		if skip || l.expandEntry(path, d, add) || !hasExtension(path) {
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
func (l *Loader) expand(path string, info fs.FileInfo, add func(unit)) bool {
	if l.Expand == nil {
		return false
	}
	docs, handled, err := l.Expand(path, info)
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

func (l *Loader) expandEntry(path string, d fs.DirEntry, add func(unit)) bool {
	if l.Expand == nil {
		return false
	}
	info, err := d.Info()
	if err != nil {
		add(problem(path, err))
		return true
	}
	return l.expand(path, info, add)
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
	if info, err := f.Stat(); err == nil && info.Size() > l.max() {
		return nil, fmt.Errorf("file is too large (%d bytes; the limit is %d, see --max-file-size)", info.Size(), l.max())
	}
	return l.readAll(f)
}

func (l *Loader) readAll(r io.Reader) ([]byte, error) {
	if r == nil {
		return nil, errors.New("no standard input")
	}
	data, err := io.ReadAll(io.LimitReader(r, l.max()+1))
	if err != nil {
		return nil, fmt.Errorf("reading: %w", err)
	}
	if int64(len(data)) > l.max() {
		return nil, fmt.Errorf("input is too large (more than %d bytes, see --max-file-size)", l.max())
	}
	return data, nil
}

var bom = []byte("\xef\xbb\xbf")

// Parse reads every object of one file's contents.
func Parse(file string, data []byte, emit func(*object.Object), fail func(Error)) {
	if i := bytes.IndexByte(data, 0); i >= 0 {
		fail(Error{File: file, Message: "binary file (contains a NUL byte), not YAML or JSON"})
		return
	}
	if !utf8.Valid(data) {
		line := 1 + bytes.Count(data[:invalidUTF8(data)], []byte("\n"))
		fail(Error{File: file, Line: line, Message: "not valid UTF-8 text"})
		return
	}
	data = bytes.TrimPrefix(data, bom)
	for _, doc := range splitDocuments(data) {
		parseDocument(file, doc, emit, fail)
	}
}

func invalidUTF8(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return len(data)
}

// document is one YAML document and the line of the file it starts on.
type document struct {
	data  []byte
	first int // 1-based line of data's first line in the file
}

// splitDocuments cuts a YAML stream at its "---" separator lines, so that a
// broken document does not hide the ones after it.
func splitDocuments(data []byte) []document {
	var docs []document
	start, startLine, line := 0, 1, 1
	for i := 0; i <= len(data); {
		end := bytes.IndexByte(data[i:], '\n')
		if end < 0 {
			end = len(data) - i
		}
		text := data[i : i+end]
		if isSeparator(text) {
			docs = append(docs, document{data: data[start:i], first: startLine})
			start, startLine = i+end+1, line+1
		}
		i += end + 1
		line++
	}
	if start < len(data) {
		docs = append(docs, document{data: data[start:], first: startLine})
	}
	return docs
}

func isSeparator(line []byte) bool {
	line = bytes.TrimRight(line, "\r")
	if !bytes.HasPrefix(line, []byte("---")) {
		return false
	}
	rest := line[3:]
	return len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t'
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

func parseDocument(file string, doc document, emit func(*object.Object), fail func(Error)) {
	var root yaml.Node
	if err := yaml.Unmarshal(doc.data, &root); err != nil {
		fail(yamlError(file, doc, err))
		return
	}
	if len(root.Content) == 0 {
		return // empty document: comments or nothing
	}
	decodeNode(file, root.Content[0], doc.first-1, emit, fail)
}

// yamlError turns a parser error into an Error at the file's line.
func yamlError(file string, doc document, err error) Error {
	line, msg := fileLines(err, doc.first-1)
	if line == 0 {
		line = doc.first
	}
	return Error{File: file, Line: line, Message: "invalid YAML: " + msg}
}

// fileLines rewrites a YAML library message whose "line N" count from the
// start of a document so that they count from the start of the file (offset
// lines before it), on one line; it returns the first such line, 0 when the
// message names none. A leading "line N: " is dropped: the Error carries it.
func fileLines(err error, offset int) (int, string) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:")
	msg = strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", " ; ")), " ")
	msg = strings.TrimPrefix(msg, "; ")
	first := 0
	msg = yamlLine.ReplaceAllStringFunc(msg, func(s string) string {
		n, _ := strconv.Atoi(strings.TrimPrefix(s, "line "))
		if first == 0 {
			first = n + offset
		}
		return "line " + strconv.Itoa(n+offset)
	})
	if first > 0 {
		msg = strings.TrimPrefix(msg, "line "+strconv.Itoa(first)+": ")
	}
	return first, msg
}

// decodeNode decodes one object node; offset is added to the node's lines,
// which count from the start of its document.
func decodeNode(file string, n *yaml.Node, offset int, emit func(*object.Object), fail func(Error)) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	line := n.Line + offset
	if n.Kind != yaml.MappingNode {
		if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
			return
		}
		fail(Error{File: file, Line: line, Message: fmt.Sprintf("document is not an object (found %s)", kindName(n))})
		return
	}
	data, err := toJSON(n)
	if err != nil {
		var je *json.UnsupportedTypeError
		at, msg := fileLines(err, offset)
		msg = "invalid YAML: " + msg
		if errors.As(err, &je) {
			msg = "cannot convert to JSON (are all keys strings?): " + err.Error()
		}
		fail(Error{File: file, Line: cmp.Or(at, line), Message: msg})
		return
	}
	lines := &nodeLines{root: n, offset: offset}
	obj, err := object.Decode(scalar(n, "apiVersion"), scalar(n, "kind"), data, object.Source{File: file, Line: line}, lines)
	if err != nil {
		var fe *object.FieldError
		msg := err.Error()
		if errors.As(err, &fe) && fe.Path != "" {
			line = lines.Line(fe.Path)
		} else if path, at := badQuantity(n, ""); path != "" {
			// Quantities report no field: find the one that does not parse.
			line, msg = at+offset, fmt.Sprintf("field %s: %v", path, err)
		}
		fail(Error{File: file, Line: line, Message: objectName(obj) + msg})
		if obj == nil {
			return
		}
	}
	if strings.HasSuffix(obj.Ref.Kind, "List") {
		if items := lookup(n, "items"); items != nil && items.Kind == yaml.SequenceNode {
			for _, item := range items.Content {
				decodeNode(file, item, offset, emit, fail)
			}
			return
		}
	}
	emit(obj)
}

// quantityMaps are the fields whose values are resource quantities.
var quantityMaps = map[string]bool{"requests": true, "limits": true, "overhead": true, "capacity": true, "hard": true}

// badQuantity finds the first quantity below n that does not parse, and
// returns its field path and its line in the document.
func badQuantity(n *yaml.Node, path string) (string, int) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := strings.TrimPrefix(path+"."+k.Value, ".")
			if quantityMaps[k.Value] && v.Kind == yaml.MappingNode {
				for j := 0; j+1 < len(v.Content); j += 2 {
					if q := v.Content[j+1]; q.Kind == yaml.ScalarNode {
						if _, err := resource.ParseQuantity(q.Value); err != nil {
							return object.Key(p, v.Content[j].Value), q.Line
						}
					}
				}
			}
			if found, line := badQuantity(v, p); found != "" {
				return found, line
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if found, line := badQuantity(c, object.Item(path, i)); found != "" {
				return found, line
			}
		}
	}
	return "", 0
}

// scalar returns the value of a top-level string field, "" when it is not one.
func scalar(m *yaml.Node, key string) string {
	if v := lookup(m, key); v != nil && v.Kind == yaml.ScalarNode && v.ShortTag() == "!!str" {
		return v.Value
	}
	return ""
}

func objectName(o *object.Object) string {
	if o == nil {
		return ""
	}
	return o.Ref.String() + ": "
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("the scalar %q", truncate(n.Value, 40))
	}
	return "something else"
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func lookup(m *yaml.Node, key string) *yaml.Node {
	if m.Kind == yaml.AliasNode {
		m = m.Alias
	}
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// nodeLines resolves field paths in a parsed YAML object whose lines count
// from offset lines into the file.
type nodeLines struct {
	root   *yaml.Node
	offset int
}

// Line returns the line of path, or of its deepest existing ancestor. Path
// segments are separated by dots; [N] indexes a list and [key] names a map key
// that itself contains dots (metadata.annotations[eks.amazonaws.com/compute-type]).
func (l *nodeLines) Line(path string) int {
	return l.line(path) + l.offset
}

func (l *nodeLines) line(path string) int {
	n, line := l.root, l.root.Line
	for _, seg := range segments(path) {
		if n.Kind == yaml.AliasNode {
			n = n.Alias
		}
		var next *yaml.Node
		keyLine := 0
		if i, err := strconv.Atoi(seg); err == nil && n.Kind == yaml.SequenceNode {
			if i >= 0 && i < len(n.Content) {
				next = n.Content[i]
				keyLine = next.Line
			}
		} else if n.Kind == yaml.MappingNode {
			for j := 0; j+1 < len(n.Content); j += 2 {
				if n.Content[j].Value == seg {
					next, keyLine = n.Content[j+1], n.Content[j].Line
					break
				}
			}
		}
		if next == nil {
			return line
		}
		n, line = next, keyLine
	}
	return line
}

func segments(path string) []string {
	var out []string
	for path != "" {
		switch path[0] {
		case '.':
			path = path[1:]
		case '[':
			end := strings.IndexByte(path, ']')
			if end < 0 {
				return append(out, path[1:])
			}
			out = append(out, path[1:end])
			path = path[end+1:]
		default:
			end := strings.IndexAny(path, ".[")
			if end < 0 {
				end = len(path)
			}
			out = append(out, path[:end])
			path = path[end:]
		}
	}
	return out
}
