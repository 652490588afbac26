package manifest

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/fargatekit/fargatekit/pkg/object"
)

// Decoding a YAML document into objects, with a resolver from field paths
// to the lines they were read from.

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
		fail(Error{File: file, Line: line, Message: fmt.Sprintf("document is not an object (found %s)", kindName(n)), NotManifest: true})
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
		}
		fail(Error{File: file, Line: line, Message: objectName(obj) + msg, NotManifest: errors.Is(err, object.ErrNotObject)})
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
