package manifest

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/fargatekit/fargatekit/pkg/object"
)

// Decoding a YAML document into objects, with a resolver from field paths
// to the lines they were read from.

// decodeNode decodes one object node of yaml.v3's; offset is added to the
// node's lines, which count from the start of its document.
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
	if strings.HasSuffix(scalar(n, "kind"), "List") { // kind: List, kubectl get -o yaml: its items, each on its own
		if items := lookup(n, "items"); items != nil && items.Kind == yaml.SequenceNode {
			for _, item := range items.Content {
				decodeNode(file, item, offset, emit, fail)
			}
			return
		}
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
	decodeObject(file, data, newLineIndex(n, offset), scalar(n, "apiVersion"), scalar(n, "kind"), line, false, emit, fail)
}

// decodeObject decodes one object's JSON, of the given apiVersion and kind
// when they are strings in it, read from line of file; checked says that no
// value in it is a quantity of an extreme exponent (object.DecodeChecked).
func decodeObject(file string, data []byte, lines *lineIndex, apiVersion, kind string, line int, checked bool, emit func(*object.Object), fail func(Error)) {
	decode := object.Decode
	if checked {
		decode = object.DecodeChecked
	}
	obj, err := decode(apiVersion, kind, data, object.Source{File: file, Line: line}, lines)
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

// lineIndex resolves field paths in a parsed YAML object whose lines count
// from offset lines into the file. It keeps, of the node tree, the keys and
// lines of the collections' children, in one array, each collection's
// children side by side (newLineIndex's order is breadth first, the fast
// parser's the order in which collections end); nodes[0] is the root. The
// keys are in one string, in the nodes' order, so that the array holds no
// pointer for the collector to scan.
type lineIndex struct {
	nodes  []lineNode
	keys   string
	offset int
}

// lineNode is a node of the tree. The compiler keeps it in registers
// (TestRegisterSized), where the fast parser builds it.
type lineNode struct {
	// keyEnd is where the node's key ends in keys; it starts where the
	// previous node's ends. The key is the mapping key that names the
	// node; "" for the root and sequence items.
	keyEnd int32
	// line is the key's line, or the node's own for the root and items.
	line int32
	children
	seq bool
}

// children are where a node's children are in its index:
// nodes[first:first+count].
type children struct{ first, count int32 }

// key is the key of nodes[i].
func (l *lineIndex) key(i int32) string {
	start := int32(0)
	if i > 0 {
		start = l.nodes[i-1].keyEnd
	}
	return l.keys[start:l.nodes[i].keyEnd]
}

// maxLineNodes bounds the index of an object (one whose aliases repeat a
// large part of it, or one of a million fields): paths into the nodes beyond
// it resolve to the line of their nearest indexed ancestor. maxLineKeys
// bounds its keys' bytes the same way.
const (
	maxLineNodes = 1 << 20
	maxLineKeys  = 1 << 26
)

// newLineIndex indexes the tree under root, breadth first, so that every
// node's children are side by side; aliases are followed.
func newLineIndex(root *yaml.Node, offset int) *lineIndex {
	size := min(treeSize(root, 0), maxLineNodes)
	nodes := make([]lineNode, 1, size)
	nodes[0].line = int32(root.Line)
	var keys strings.Builder
	queue := make([]*yaml.Node, 1, size)
	queue[0] = root
	for i := 0; i < len(queue); i++ {
		n := queue[i]
		for depth := 0; n.Kind == yaml.AliasNode && n.Alias != nil && depth < maxDepth; depth++ {
			n = n.Alias
		}
		children, keySize := len(n.Content), 0
		if n.Kind == yaml.MappingNode {
			children /= 2 // a key and its value are one node
			for j := 0; j+1 < len(n.Content); j += 2 {
				keySize += len(n.Content[j].Value)
			}
		}
		if len(nodes)+children > maxLineNodes || keys.Len()+keySize > maxLineKeys {
			continue
		}
		e := &nodes[i]
		e.first, e.seq = int32(len(nodes)), n.Kind == yaml.SequenceNode
		switch n.Kind {
		case yaml.MappingNode:
			for j := 0; j+1 < len(n.Content); j += 2 {
				keys.WriteString(n.Content[j].Value)
				nodes = append(nodes, lineNode{keyEnd: int32(keys.Len()), line: int32(n.Content[j].Line)})
				queue = append(queue, n.Content[j+1])
			}
		case yaml.SequenceNode:
			for _, c := range n.Content {
				nodes = append(nodes, lineNode{keyEnd: int32(keys.Len()), line: int32(c.Line)})
				queue = append(queue, c)
			}
		}
		nodes[i].count = int32(len(nodes)) - nodes[i].first
	}
	return &lineIndex{nodes: nodes, keys: keys.String(), offset: offset}
}

// treeSize counts the nodes under n that newLineIndex indexes (a mapping's
// keys and values count once), up to maxLineNodes past count.
func treeSize(n *yaml.Node, count int) int {
	for depth := 0; n.Kind == yaml.AliasNode && n.Alias != nil && depth < maxDepth; depth++ {
		n = n.Alias
	}
	count++
	step := 1
	if n.Kind == yaml.MappingNode {
		step = 2
	}
	for i := step - 1; i < len(n.Content) && count <= maxLineNodes; i += step {
		count = treeSize(n.Content[i], count)
	}
	return count
}

// Line returns the line of path, or of its deepest existing ancestor. Path
// segments are separated by dots; [N] indexes a list and [key] names a map key
// that itself contains dots (metadata.annotations[eks.amazonaws.com/compute-type]).
func (l *lineIndex) Line(path string) int {
	return l.line(path) + l.offset
}

func (l *lineIndex) line(path string) int {
	n := &l.nodes[0]
	for seg := range segments(path) {
		next := int32(-1)
		if n.seq {
			if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < int(n.count) {
				next = n.first + int32(i)
			}
		} else {
			for j := n.first; j < n.first+n.count; j++ {
				if l.key(j) == seg {
					next = j
					break
				}
			}
		}
		if next < 0 {
			break
		}
		n = &l.nodes[next]
	}
	return int(n.line)
}

// segments yields the segments of a field path, without allocating (a
// line is looked up for each finding).
func segments(path string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for path != "" {
			var seg string
			switch path[0] {
			case '.':
				path = path[1:]
				continue
			case '[':
				end := strings.IndexByte(path, ']')
				if end < 0 {
					yield(path[1:])
					return
				}
				seg, path = path[1:end], path[end+1:]
			default:
				end := strings.IndexAny(path, ".[")
				if end < 0 {
					end = len(path)
				}
				seg, path = path[:end], path[end:]
			}
			if !yield(seg) {
				return
			}
		}
	}
}
