package manifest

import (
	"encoding/binary"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"go.yaml.in/yaml/v3"

	"github.com/fargatekit/fargatekit/pkg/object"
)

// A parser for the YAML that manifests are written in, which writes the
// JSON the object decoder reads and the index of the lines of the fields
// (lineIndex) in one pass, with no node tree: what yaml.v3 and toJSON and
// newLineIndex make of the same document. It knows a subset: block mappings
// and sequences, flow mappings and sequences on one line or several, plain
// scalars on one line, quoted scalars on one line, literal block scalars,
// comments, all in printable ASCII without tabs, with keys that are strings,
// each once in its mapping, and scalars JSON can spell. On anything else
// (anchors, aliases, tags, complex keys, folded or multi-line scalars, merge
// keys, timestamps, directives, numbers such as 0x1F, and every error) it
// declines, and the document goes to yaml.v3, which also words the errors.
// FuzzFastYAML requires both ways to give the same JSON and the same lines
// for every document the fast parser accepts.

// fastDoc is what the fast parser makes of a document.
type fastDoc struct {
	// root is the document's node, without its text; its kind is 0 for
	// an empty document (comments or nothing).
	root value
	// json is root as JSON, valid until the parser parses again.
	json []byte
	// lines indexes the lines of root's fields, counted from the
	// document's first line.
	lines *lineIndex
	// apiVersion and kind are root's fields of those names when their
	// values are strings, copied out of the document.
	apiVersion, kind string
	// extreme is true when a value may be read as a quantity of an
	// object.ExtremeExponent: the document is decoded with object.Decode,
	// which checks each quantity, not object.DecodeChecked.
	extreme bool
}

// value is what the parser knows of a node it has read: its line; a
// scalar's tag and text (not yet written as JSON: it may be a key); a
// collection's children in the index (written). Every step of the parser
// returns one, so it is a struct the compiler keeps in registers
// (TestRegisterSized): made larger, the parser took a third longer.
type value struct {
	text string
	line int32
	children
	shape
}

// shape is a node's kind and, for a scalar, its tag.
type shape struct {
	kind nodeKind
	tag  tag
}

// nodeKind is a node's yaml.Kind in a byte.
type nodeKind uint8

const (
	scalarNode   = nodeKind(yaml.ScalarNode)
	mappingNode  = nodeKind(yaml.MappingNode)
	sequenceNode = nodeKind(yaml.SequenceNode)
)

// tag is a scalar's resolved tag of the core schema; tagNames spells them.
type tag uint8

const (
	strTag tag = iota
	nullTag
	boolTag
	intTag
	floatTag
)

var tagNames = [...]string{strTag: "!!str", nullTag: "!!null", boolTag: "!!bool", intTag: "!!int", floatTag: "!!float"}

// parsers holds the parsers not in use, with the buffers they grew.
var parsers = sync.Pool{New: func() any { return new(fastParser) }}

// maxKept bounds the buffers a parser keeps for the next document: one
// large document does not hold its memory for the rest of the run.
const maxKept = 1 << 20

// release puts p back in parsers, without the document it read and
// without buffers grown past maxKept.
func (p *fastParser) release() {
	p.src = ""
	if cap(p.json) > maxKept {
		p.json = nil
	}
	if cap(p.index)*int(unsafe.Sizeof(parsedNode{})) > maxKept {
		p.index = nil
	}
	if cap(p.stack)*int(unsafe.Sizeof(parsedNode{})) > maxKept {
		p.stack = nil
	}
	parsers.Put(p)
}

// parse parses one document; ok is false when the parser declines.
func (p *fastParser) parse(data []byte) (doc fastDoc, ok bool) {
	if !printable(data) {
		return doc, false
	}
	// The document is read in place, not copied: nothing the parser
	// returns refers to it (the JSON is written, the index's keys, the
	// apiVersion and the kind copied, root's text dropped), since the
	// Loader reads the next file into the same buffer (release).
	*p = fastParser{src: unsafe.String(unsafe.SliceData(data), len(data)), line: 1, json: p.json[:0], index: append(p.index[:0], parsedNode{}), stack: p.stack[:0]}
	defer func() {
		if r := recover(); r != nil {
			if _, declined := r.(decline); !declined {
				panic(r)
			}
			doc, ok = fastDoc{}, false
		}
	}()
	p.nextContent()
	if p.ind < 0 {
		return doc, true
	}
	if p.ind != 0 || p.src[p.pos] == '%' {
		p.decline() // directives; a root node indented is left to yaml.v3
	}
	root := p.node(-1, true)
	if p.ind >= 0 || len(p.index) > maxLineNodes {
		p.decline() // something after the root node; an index newLineIndex would cut
	}
	p.index[0] = parsedNode{line: root.line, children: root.children, seq: root.kind == sequenceNode}
	root.text = ""
	return fastDoc{root: root, json: p.json, lines: p.lines(), apiVersion: strings.Clone(p.apiVersion), kind: strings.Clone(p.kind), extreme: p.extreme}, true
}

// printable reports whether data is printable ASCII and line breaks, eight
// bytes at a time: each mask below has the high bit of a byte set where the
// byte is what the mask names, with no carry from one byte to the next.
func printable(data []byte) bool {
	const ones, high, low = 0x0101010101010101, 0x8080808080808080, 0x7f7f7f7f7f7f7f7f
	zero := func(x uint64) uint64 { return ^((x&low + low) | x | low) }
	i := 0
	for ; i+8 <= len(data); i += 8 {
		x := binary.LittleEndian.Uint64(data[i:])
		control := ^((x | high) - ' '*ones) & high // below ' ', or 0x80 and above
		if (x&high)|(control&^zero(x^'\n'*ones))|zero(x^0x7f*ones) != 0 {
			return false
		}
	}
	for _, c := range data[i:] {
		if c != '\n' && (c < ' ' || c > '~') {
			return false
		}
	}
	return true
}

// lines makes the line index of what the parser read: a copy of its
// index, whose keys are copied too, so that it holds none of the document
// (copying the whole document instead was 6.4% of what BenchmarkCheck
// allocated). It declines keys beyond what a lineIndex holds.
func (p *fastParser) lines() *lineIndex {
	size := 0
	for i := range p.index {
		size += len(p.index[i].key)
	}
	if size > maxLineKeys {
		p.decline()
	}
	var keys strings.Builder
	keys.Grow(size)
	nodes := make([]lineNode, len(p.index))
	for i, n := range p.index {
		keys.WriteString(n.key)
		nodes[i] = lineNode{keyEnd: int32(keys.Len()), line: n.line, children: n.children, seq: n.seq}
	}
	return &lineIndex{nodes: nodes, keys: keys.String()}
}

// decline is the panic with which the parser gives a document up.
type decline struct{}

// maxDepth bounds the nesting the parser follows; yaml.v3 takes deeper ones.
const maxDepth = 200

type fastParser struct {
	src       string
	pos       int // the next byte
	line      int // 1-based line of pos
	lineStart int // offset of that line's first byte
	// ind is the indentation of the line nextContent stopped at, -1 at
	// the end of the document.
	ind   int
	depth int

	json []byte // the JSON written so far
	// index holds the children of the collections read, side by side,
	// each collection's once it ends; index[0] is the root's entry.
	index []parsedNode
	// stack holds the children of the collections being read.
	stack []parsedNode
	// apiVersion and kind are the root mapping's, when strings.
	apiVersion, kind string
	extreme          bool // see fastDoc
}

// parsedNode is a lineNode as the parser keeps it while it reads: its key
// is the document's text, or the text unquoted. The compiler keeps it in
// registers (TestRegisterSized).
type parsedNode struct {
	key  string
	line int32
	children
	seq bool
}

func (p *fastParser) decline() { panic(decline{}) }

// scalarJSON writes a scalar value as JSON, or declines one JSON cannot
// spell as toJSON does.
func (p *fastParser) scalarJSON(v value) {
	b, ok := appendScalar(p.json, v.tag, v.text)
	if !ok {
		p.decline()
	}
	p.json = b
	p.quantity(v.text)
}

// quantity notes a value that may be read as a quantity of an extreme
// exponent: as unmarshalQuantity reads it, spaces trimmed; its exponent's
// digits end it.
func (p *fastParser) quantity(text string) {
	t := strings.TrimSpace(text)
	i := len(t)
	for i > 0 && t[i-1]-'0' < 10 {
		i--
	}
	if len(t)-i > 3 && object.ExtremeExponent(t) { // most values do not end in four digits
		p.extreme = true
	}
}

// key writes a mapping's key as JSON (after a comma unless it is the first,
// at start of the stack) and declines a key JSON cannot name or one the
// mapping already has, as toJSON does.
func (p *fastParser) key(k value, start int, seen *map[string]bool) {
	if k.tag != strTag {
		p.decline()
	}
	keys := p.stack[start:]
	switch {
	case *seen != nil:
	case len(keys) < 16:
		for i := range keys {
			if keys[i].key == k.text {
				p.decline()
			}
		}
	default: // a large mapping: a set of its keys
		*seen = make(map[string]bool, 2*len(keys))
		for i := range keys {
			(*seen)[keys[i].key] = true
		}
	}
	if *seen != nil {
		if (*seen)[k.text] {
			p.decline()
		}
		(*seen)[k.text] = true
	}
	if len(keys) > 0 {
		p.json = append(p.json, ',')
	}
	p.json = append(appendString(p.json, k.text), ':')
}

// child adds a collection's child to the stack: a mapping's value under
// its key, or a sequence's item.
func (p *fastParser) child(key string, line int32, v value) {
	p.stack = append(p.stack, parsedNode{key: key, line: line, children: v.children, seq: v.kind == sequenceNode})
}

// field keeps a root mapping's apiVersion and kind.
func (p *fastParser) field(k, v value) {
	if v.kind != scalarNode || v.tag != strTag {
		return
	}
	switch k.text {
	case "apiVersion":
		p.apiVersion = v.text
	case "kind":
		p.kind = v.text
	}
}

// end moves the children pushed since start into the index, side by side,
// and sets where they are in v.
func (p *fastParser) end(v *value, start int) {
	v.first, v.count = int32(len(p.index)), int32(len(p.stack)-start)
	p.index = append(p.index, p.stack[start:]...)
	p.stack = p.stack[:start]
}

func (p *fastParser) enter() {
	if p.depth++; p.depth > maxDepth {
		p.decline()
	}
}

// blank reports whether the byte at i ends a token: a space, a line break
// or the end.
func (p *fastParser) blank(i int) bool {
	return i >= len(p.src) || p.src[i] == ' ' || p.src[i] == '\n'
}

func (p *fastParser) skipSpaces() {
	for p.pos < len(p.src) && p.src[p.pos] == ' ' {
		p.pos++
	}
}

// atLineEnd reports whether only a comment or nothing is left on the line.
func (p *fastParser) atLineEnd() bool {
	if p.pos >= len(p.src) || p.src[p.pos] == '\n' {
		return true
	}
	return p.src[p.pos] == '#' && (p.pos == p.lineStart || p.src[p.pos-1] == ' ')
}

// endLine requires nothing but spaces and a comment to the end of the line,
// then moves to the next line with content.
func (p *fastParser) endLine() {
	p.skipSpaces()
	if !p.atLineEnd() {
		p.decline()
	}
	p.nextContent()
}

// nextContent moves past the rest of the current line (unless pos is at a
// line's start) and past blank and comment lines, to the first character
// of the next line with content, and sets ind to its indentation (-1 at the
// end of the document).
func (p *fastParser) nextContent() {
	if p.pos > p.lineStart {
		i := strings.IndexByte(p.src[p.pos:], '\n')
		if i < 0 {
			p.pos, p.ind = len(p.src), -1
			return
		}
		p.newLine(p.pos + i + 1)
	}
	for p.pos < len(p.src) {
		start := p.pos
		p.skipSpaces()
		if !p.atLineEnd() {
			p.ind = p.pos - start
			if p.ind == 0 && (strings.HasPrefix(p.src[p.pos:], "---") || strings.HasPrefix(p.src[p.pos:], "...")) {
				p.decline() // document markers are left to yaml.v3
			}
			return
		}
		i := strings.IndexByte(p.src[p.pos:], '\n')
		if i < 0 {
			break
		}
		p.newLine(p.pos + i + 1)
	}
	p.pos, p.ind = len(p.src), -1
}

func (p *fastParser) newLine(start int) {
	p.pos, p.lineStart = start, start
	p.line++
}

// node reads the node that starts at pos, in a block collection indented
// by parent (-1 at the root), and writes it as JSON; block says whether the
// node may be a block mapping or sequence starting on this line (not after
// "key: ").
func (p *fastParser) node(parent int, block bool) value {
	p.enter()
	defer func() { p.depth-- }()
	c := p.src[p.pos]
	switch {
	case c == '-' && p.blank(p.pos+1):
		if !block {
			p.decline()
		}
		return p.sequence()
	case c == '{' || c == '[':
		v := p.flow(parent)
		p.skipSpaces()
		if p.pos < len(p.src) && p.src[p.pos] == ':' {
			p.decline() // a flow collection as a key
		}
		p.endLine()
		return v
	case c == '|':
		return p.literal(parent)
	case blockStarts[c]:
		p.decline()
	}
	ind := p.pos - p.lineStart
	v := p.scalar(false)
	if p.pos < len(p.src) && p.src[p.pos] == ':' && p.blank(p.pos+1) {
		if !block {
			p.decline() // "a: b: c"
		}
		return p.mapping(ind, v)
	}
	p.endLine()
	p.scalarJSON(v)
	return v
}

// mapping reads a block mapping indented by ind whose first key has been
// read, pos at its ':'. The root mapping is the one read at depth 1.
func (p *fastParser) mapping(ind int, key value) value {
	m := value{shape: shape{kind: mappingNode}, line: key.line}
	start := len(p.stack)
	var seen map[string]bool
	p.json = append(p.json, '{')
	for {
		p.key(key, start, &seen)
		v := p.after(ind, true)
		p.child(key.text, key.line, v)
		if p.depth == 1 {
			p.field(key, v)
		}
		if p.ind < ind {
			break
		}
		if p.ind > ind {
			p.decline()
		}
		if c := p.src[p.pos]; keyStarts[c] {
			p.decline()
		}
		key = p.scalar(false)
		if p.pos >= len(p.src) || p.src[p.pos] != ':' || !p.blank(p.pos+1) {
			p.decline()
		}
	}
	p.json = append(p.json, '}')
	p.end(&m, start)
	return m
}

// after reads the node after a key's ':' (key) or an item's '-', at pos,
// in a block collection indented by ind: on the same line, on the lines
// below indented deeper (or, after a key, a sequence indented by ind), or
// none, an empty scalar on the indicator's line.
func (p *fastParser) after(ind int, key bool) value {
	line := p.line
	p.pos++
	p.skipSpaces()
	if !p.atLineEnd() {
		return p.node(ind, !key)
	}
	p.nextContent()
	switch {
	case p.ind > ind:
		return p.node(ind, true)
	case key && p.ind == ind && p.src[p.pos] == '-' && p.blank(p.pos+1):
		return p.sequence()
	}
	p.json = append(p.json, "null"...)
	return value{shape: shape{scalarNode, nullTag}, line: int32(line)}
}

// sequence reads a block sequence whose first '-' is at pos.
func (p *fastParser) sequence() value {
	ind := p.pos - p.lineStart
	s := value{shape: shape{kind: sequenceNode}, line: int32(p.line)}
	start := len(p.stack)
	p.json = append(p.json, '[')
	for {
		if len(p.stack) > start {
			p.json = append(p.json, ',')
		}
		v := p.after(ind, false)
		p.child("", v.line, v)
		if p.ind < ind {
			break
		}
		if p.ind > ind || p.src[p.pos] != '-' {
			if p.ind == ind {
				break // the sequence is the value of a key at its indentation
			}
			p.decline()
		}
		if !p.blank(p.pos + 1) {
			p.decline()
		}
	}
	p.json = append(p.json, ']')
	p.end(&s, start)
	return s
}

// scalar reads a plain or quoted scalar that ends on its line, pos then
// after it (and after the spaces that follow a plain one); flow says
// whether it is inside a flow collection.
func (p *fastParser) scalar(flow bool) value {
	v := value{shape: shape{scalarNode, strTag}, line: int32(p.line)}
	if c := p.src[p.pos]; c == '"' || c == '\'' {
		start := p.pos
		if c == '"' {
			v.text = p.doubleQuoted()
		} else {
			v.text = p.singleQuoted()
		}
		p.longKey(start)
		return v
	}
	stops := plainStops
	if flow {
		stops = flowStops
	}
	start, end, i := p.pos, p.pos, p.pos
	for {
		j := i
		for j < len(p.src) && !stops[p.src[j]] {
			j++
		}
		if j > i {
			end = j
		}
		if i = j; i >= len(p.src) {
			break
		}
		c := p.src[i]
		if c == '\n' || c == ':' && p.blank(i+1) || c == '#' && p.src[i-1] == ' ' || flow && flowEndSet[c] {
			break
		}
		if c != ' ' {
			end = i + 1
		}
		i++
	}
	p.pos = i
	v.text = p.src[start:end]
	p.longKey(start)
	var ok bool
	if v.tag, ok = plainTag(v.text); !ok {
		p.decline()
	}
	return v
}

// blockIndicators are the bytes the parser declines at the start of a node
// in a block collection (or handles apart: '-', '|', '{', '[').
const blockIndicators = "&*!?:,]}#>%@`"

// flowEnds are the bytes that end a plain scalar in a flow collection.
const flowEnds = ",?[]{}"

// Sets of bytes, looked up where the parser reads each byte or each node:
var (
	// plainStops are the bytes at which scalar looks whether a plain
	// scalar ends (or where its text ends, before spaces); flowStops, in a
	// flow.
	plainStops, flowStops = byteSet(" \n:#"), byteSet(" \n:#" + flowEnds)
	flowEndSet            = byteSet(flowEnds)
	// blockStarts are declined at the start of a node in a block
	// collection; keyStarts at the start of a block mapping's next key;
	// flowStarts (with "- ") at the start of a scalar in a flow.
	blockStarts = byteSet(blockIndicators)
	keyStarts   = byteSet(blockIndicators + "-|{[")
	flowStarts  = byteSet(blockIndicators + "|{[")
	// digitSet are the digits; numberSet the bytes of the numbers yaml.v3 reads.
	digitSet, numberSet = byteSet(digits), byteSet(digits + "abcdefABCDEFxXoO_+-.")
)

func byteSet(bytes string) *[256]bool {
	var t [256]bool
	for i := range len(bytes) {
		t[bytes[i]] = true
	}
	return &t
}

// longKey declines a scalar from start to pos that is a key (':' follows,
// after spaces) longer than the 1024 characters yaml.v3 allows a key.
func (p *fastParser) longKey(start int) {
	if p.pos-start <= 1000 {
		return
	}
	rest := strings.TrimLeft(p.src[p.pos:], " ")
	if rest != "" && rest[0] == ':' {
		p.decline()
	}
}

// singleQuoted reads a single-quoted scalar on one line.
func (p *fastParser) singleQuoted() string {
	var b []byte
	i := p.pos + 1
	for start := i; ; i++ {
		if i >= len(p.src) || p.src[i] == '\n' {
			p.decline() // multi-line
		}
		if p.src[i] != '\'' {
			continue
		}
		if i+1 < len(p.src) && p.src[i+1] == '\'' {
			b = append(b, p.src[start:i+1]...)
			i++
			start = i + 1
			continue
		}
		p.pos = i + 1
		p.afterQuote()
		if b == nil {
			return p.src[start:i]
		}
		return string(append(b, p.src[start:i]...))
	}
}

// escapes are the double-quoted escapes the parser knows besides \x, \u
// and \U.
var escapes = [256]byte{'0': 0, 'a': '\a', 'b': '\b', 't': '\t', 'n': '\n', 'v': '\v', 'f': '\f', 'r': '\r', 'e': 0x1b, ' ': ' ', '"': '"', '\'': '\'', '\\': '\\'}

// doubleQuoted reads a double-quoted scalar on one line.
func (p *fastParser) doubleQuoted() string {
	var b []byte
	i := p.pos + 1
	for start := i; ; i++ {
		if i >= len(p.src) || p.src[i] == '\n' {
			p.decline()
		}
		switch p.src[i] {
		case '"':
			p.pos = i + 1
			p.afterQuote()
			if b == nil {
				return p.src[start:i]
			}
			return string(append(b, p.src[start:i]...))
		case '\\':
			b = append(b, p.src[start:i]...)
			if i+1 >= len(p.src) {
				p.decline()
			}
			e := p.src[i+1]
			size := 0
			switch e {
			case 'x':
				size = 2
			case 'u':
				size = 4
			case 'U':
				size = 8
			}
			switch {
			case size > 0:
				if i+2+size > len(p.src) {
					p.decline()
				}
				r, err := strconv.ParseUint(p.src[i+2:i+2+size], 16, 32)
				if err != nil || r > utf8.MaxRune || r >= 0xd800 && r <= 0xdfff {
					p.decline()
				}
				b = utf8.AppendRune(b, rune(r))
				i += 1 + size
			case e == '0' || escapes[e] != 0:
				b = append(b, escapes[e])
				i++
			default:
				p.decline() // \N, \_, \L, \P, a line break, or an error
			}
			start = i + 1
		}
	}
}

// afterQuote checks what follows a closing quote: a key's ':', or spaces
// and then the end of the line, a comment, or (in a flow) the next token.
func (p *fastParser) afterQuote() {
	if p.pos < len(p.src) && p.src[p.pos] != ' ' && p.src[p.pos] != '\n' && strings.IndexByte(":,]}", p.src[p.pos]) < 0 {
		p.decline()
	}
}

// literal reads a literal block scalar ("|", "|-" or "|+") in a block
// collection indented by parent.
func (p *fastParser) literal(parent int) value {
	if parent < 0 {
		p.decline() // a document that is a block scalar
	}
	v := value{shape: shape{scalarNode, strTag}, line: int32(p.line)}
	p.pos++
	chomp := byte(0)
	if p.pos < len(p.src) && (p.src[p.pos] == '-' || p.src[p.pos] == '+') {
		chomp = p.src[p.pos]
		p.pos++
	}
	if !p.blank(p.pos) {
		p.decline() // an indentation indicator, or an error
	}
	p.skipSpaces()
	if !p.atLineEnd() {
		p.decline()
	}
	nl := strings.IndexByte(p.src[p.pos:], '\n')
	if nl < 0 {
		p.decline()
	}
	p.newLine(p.pos + nl + 1)
	// Lines: the first one with content sets the indentation.
	indent, leading := -1, 0
	var b strings.Builder
	breaks := 0 // line breaks not yet written: the scalar's trailing ones
	for p.pos < len(p.src) {
		end := strings.IndexByte(p.src[p.pos:], '\n')
		if end < 0 {
			end = len(p.src) - p.pos
		}
		text := p.src[p.pos : p.pos+end]
		spaces := len(text) - len(strings.TrimLeft(text, " "))
		if spaces == len(text) && (indent < 0 || spaces <= indent) {
			if indent < 0 {
				leading = max(leading, spaces)
			}
			breaks++ // an empty line
		} else {
			if indent < 0 {
				if spaces <= parent || spaces < leading {
					p.decline() // an empty scalar, or a more-indented leading line
				}
				indent = spaces
			}
			if spaces < indent {
				break // the next node
			}
			if b.Len() > 0 {
				breaks++
			}
			for ; breaks > 0; breaks-- {
				b.WriteByte('\n')
			}
			b.WriteString(text[indent:])
		}
		if p.pos+end >= len(p.src) {
			p.decline() // no line break after the last line
		}
		p.newLine(p.pos + end + 1)
	}
	if indent < 0 {
		p.decline()
	}
	switch chomp {
	case 0:
		b.WriteByte('\n')
	case '+':
		for breaks++; breaks > 0; breaks-- {
			b.WriteByte('\n')
		}
	}
	v.text = b.String()
	p.json = appendString(p.json, v.text)
	p.quantity(v.text)
	p.pos = p.lineStart
	p.nextContent()
	return v
}

// flow reads a flow mapping or sequence in a block collection indented by
// parent, pos at its bracket; pos is then after the closing one. The root
// mapping is one read at depth 2 (the root node's, then its own).
func (p *fastParser) flow(parent int) value {
	p.enter()
	defer func() { p.depth-- }()
	mapping := p.src[p.pos] == '{'
	v := value{shape: shape{kind: sequenceNode}, line: int32(p.line)}
	closing := byte(']')
	if mapping {
		v.kind, closing = mappingNode, '}'
	}
	p.json = append(p.json, p.src[p.pos])
	p.pos++
	start := len(p.stack)
	var seen map[string]bool
	for first := true; ; first = false {
		p.flowSpace(parent)
		if p.src[p.pos] == closing {
			break
		}
		if !first {
			if p.src[p.pos] != ',' {
				p.decline()
			}
			p.pos++
			p.flowSpace(parent)
			if p.src[p.pos] == closing {
				p.decline() // a trailing comma
			}
		}
		if !mapping {
			if !first {
				p.json = append(p.json, ',')
			}
			item := p.flowItem(parent)
			if p.src[p.pos] == ':' {
				p.decline() // a pair in a sequence
			}
			p.child("", item.line, item)
			continue
		}
		key := p.flowScalar()
		p.flowSpace(parent)
		if int32(p.line) != key.line || p.src[p.pos] != ':' || !p.blank(p.pos+1) {
			p.decline()
		}
		p.key(key, start, &seen)
		p.pos++
		p.flowSpace(parent)
		if c := p.src[p.pos]; c == ',' || c == closing {
			p.decline() // an empty value
		}
		val := p.flowItem(parent)
		p.child(key.text, key.line, val)
		if p.depth == 2 {
			p.field(key, val)
		}
	}
	p.pos++
	p.json = append(p.json, closing)
	p.end(&v, start)
	return v
}

// flowItem reads a scalar or a nested collection in a flow collection,
// writes it as JSON, and skips the spaces after it.
func (p *fastParser) flowItem(parent int) value {
	var v value
	if c := p.src[p.pos]; c == '{' || c == '[' {
		v = p.flow(parent)
	} else {
		v = p.flowScalar()
		p.scalarJSON(v)
	}
	p.flowSpace(parent)
	return v
}

// flowScalar reads a scalar in a flow collection, and declines what else
// may start there (a collection, where a key is read): in a flow, ':' is
// always a value indicator, '?' always a key's.
func (p *fastParser) flowScalar() value {
	if c := p.src[p.pos]; flowStarts[c] || c == '-' && p.blank(p.pos+1) {
		p.decline()
	}
	return p.scalar(true)
}

// flowSpace skips spaces, comments and line breaks in a flow collection;
// its lines must be indented deeper than the block around it.
func (p *fastParser) flowSpace(parent int) {
	for {
		p.skipSpaces()
		if p.pos >= len(p.src) {
			p.decline()
		}
		if !p.atLineEnd() {
			return
		}
		i := strings.IndexByte(p.src[p.pos:], '\n')
		if i < 0 {
			p.decline()
		}
		p.newLine(p.pos + i + 1)
		p.skipSpaces()
		if p.pos-p.lineStart <= parent && !p.atLineEnd() {
			p.decline()
		}
	}
}

// plainTag is the tag yaml.v3 resolves a plain scalar to; ok is false for
// those the fast parser leaves to it (merge keys, timestamps).
func plainTag(s string) (_ tag, ok bool) {
	if s == "" {
		return nullTag, true
	}
	switch c := s[0]; {
	case c == '+' || c == '-' || c >= '0' && c <= '9':
		return numberTag(s)
	case c == '.':
		switch s {
		case ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF":
			return floatTag, true
		}
		if _, err := strconv.ParseFloat(s, 64); err == nil {
			return floatTag, true
		}
	case c == '<' && s == "<<":
		return 0, false
	case c == '~' || c == 'n' || c == 'N':
		switch s {
		case "~", "null", "Null", "NULL":
			return nullTag, true
		}
	case c == 't' || c == 'T' || c == 'f' || c == 'F':
		switch s {
		case "true", "True", "TRUE", "false", "False", "FALSE":
			return boolTag, true
		}
	}
	return strTag, true
}

// numberTag resolves a plain scalar that starts with a sign or a digit.
func numberTag(s string) (tag, bool) {
	switch s {
	case "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF":
		return floatTag, true
	}
	if len(s) > 4 && s[4] == '-' && only(s[:4], digitSet) {
		return 0, false // maybe a timestamp
	}
	if !only(s, numberSet) {
		return strTag, true // 500m, 1Gi, v1.2.3: not a number yaml.v3 reads
	}
	plain := strings.ReplaceAll(s, "_", "")
	if _, err := strconv.ParseInt(plain, 0, 64); err == nil {
		return intTag, true
	}
	if _, err := strconv.ParseUint(plain, 0, 64); err == nil {
		return intTag, true
	}
	if yamlFloat(plain) {
		if _, err := strconv.ParseFloat(plain, 64); err == nil {
			return floatTag, true
		}
		return 0, false // out of range: left to yaml.v3
	}
	for _, prefix := range []string{"0b", "-0b", "0o", "-0o"} {
		if strings.HasPrefix(plain, prefix) {
			return 0, false // binary and octal numbers (signed ones too) are left to yaml.v3
		}
	}
	return strTag, true
}

const digits = "0123456789"

// only reports whether every byte of s is in set.
func only(s string, set *[256]bool) bool {
	for i := 0; i < len(s); i++ {
		if !set[s[i]] {
			return false
		}
	}
	return true
}

// yamlFloat reports whether s is spelled as YAML's floats are:
// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
func yamlFloat(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	digits := func() int {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		d := i
		s = s[i:]
		return d
	}
	if s == "" {
		return false
	}
	if s[0] == '.' {
		s = s[1:]
		if digits() == 0 {
			return false
		}
	} else {
		if digits() == 0 {
			return false
		}
		if s != "" && s[0] == '.' {
			s = s[1:]
			digits()
		}
	}
	if s != "" && (s[0] == 'e' || s[0] == 'E') {
		s = s[1:]
		if s != "" && (s[0] == '+' || s[0] == '-') {
			s = s[1:]
		}
		if digits() == 0 {
			return false
		}
	}
	return s == ""
}
