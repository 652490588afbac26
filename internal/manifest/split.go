package manifest

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/fargatekit/fargatekit/pkg/object"
)

// Splitting a file into YAML documents, each parsed on its own so that one
// broken document does not hide the next, with errors at the file's lines.

var bom = []byte("\xef\xbb\xbf")

// Parse reads every object of one file's contents.
func Parse(file string, data []byte, emit func(*object.Object), fail func(Error)) {
	docs, err := documents(file, data)
	if err != nil {
		fail(*err)
		return
	}
	for _, doc := range docs {
		parseDocument(file, doc, emit, fail)
	}
}

// documents returns the YAML documents of a file, or why it is no text.
func documents(file string, data []byte) ([]document, *Error) {
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return nil, &Error{File: file, Message: "binary file (contains a NUL byte), not YAML or JSON"}
	}
	if !utf8.Valid(data) {
		line := 1 + bytes.Count(data[:invalidUTF8(data)], []byte("\n"))
		return nil, &Error{File: file, Line: line, Message: "not valid UTF-8 text"}
	}
	return splitDocuments(bytes.TrimPrefix(data, bom)), nil
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

// parseDocument parses a document with the fast parser (fastyaml.go), or
// with yaml.v3 where the fast one declines or the document is not one
// object (a list, a scalar, a kind: List, whose errors and items decodeNode
// knows).
func parseDocument(file string, doc document, emit func(*object.Object), fail func(Error)) {
	p := parsers.Get().(*fastParser)
	defer p.release() // the JSON is decoded before it returns
	d, ok := p.parse(doc.data)
	if ok && d.root.kind == 0 {
		return // empty document: comments or nothing
	}
	offset := doc.first - 1
	if ok && d.root.kind == mappingNode && !strings.HasSuffix(d.kind, "List") {
		d.lines.offset = offset
		decodeObject(file, d.json, d.lines, d.apiVersion, d.kind, int(d.root.line)+offset, !d.extreme, emit, fail)
		return
	}
	var root yaml.Node
	if err := yaml.Unmarshal(doc.data, &root); err != nil {
		fail(yamlError(file, doc, err))
		return
	}
	if len(root.Content) > 0 {
		decodeNode(file, root.Content[0], offset, emit, fail)
	}
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
