package manifest

import (
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// A parser for the YAML that manifests are written in, building the same
// node tree as yaml.v3 (kinds, tags, values, lines and columns) five to
// seven times faster (docs/benchmarks.md). It knows a subset: block mappings and
// sequences, flow mappings and sequences on one line or several, plain
// scalars on one line, quoted scalars on one line, literal block scalars,
// comments, all in printable ASCII without tabs. On anything else (anchors,
// aliases, tags, complex keys, folded or multi-line scalars, merge keys,
// timestamps, directives, and every error) it declines, and the document
// goes to yaml.v3, which also words the errors. FuzzFastYAML requires both
// to build the same tree for every document the fast parser accepts.

// arena is the memory of the trees the fast parser builds: their nodes, the
// arrays of their Content slices, and its stack. A tree lives in its arena
// until the arena parses the next document, so that the memory of one
// document's tree serves the next one's (most of what checking a document
// allocated was its tree: 150 nodes of 152 bytes for a 1.4 KB Deployment).
type arena struct {
	nodes []yaml.Node
	ptrs  []*yaml.Node
	stack []*yaml.Node
}

// arenas holds the arenas not in use; Loader takes one per document and
// puts it back once the document's objects are decoded.
var arenas = sync.Pool{New: func() any { return new(arena) }}

// fastParse parses one document into a tree in a (a new arena when nil),
// which stays valid until a parses again. ok is false when the parser
// declines; a nil node with ok true is an empty document (comments or
// nothing).
func fastParse(data []byte, a *arena) (n *yaml.Node, ok bool) {
	for _, c := range data {
		if c != '\n' && (c < ' ' || c > '~') {
			return nil, false
		}
	}
	if a == nil {
		a = new(arena)
	}
	p := &fastParser{src: string(data), line: 1}
	// Nodes are taken from one array sized for the document: two per key,
	// one per sequence item, rounded up.
	if need := 2*strings.Count(p.src, ":") + strings.Count(p.src, ",") + strings.Count(p.src, "-") + 4; cap(a.nodes) < need {
		a.nodes = make([]yaml.Node, 0, need)
	}
	p.nodes, p.ptrs, p.stack = a.nodes[:0], a.ptrs[:0], a.stack[:0]
	defer func() {
		// Keep the arrays that grew for the next document.
		if cap(p.ptrs) > cap(a.ptrs) {
			a.ptrs = p.ptrs
		}
		if cap(p.stack) > cap(a.stack) {
			a.stack = p.stack
		}
		if r := recover(); r != nil {
			if _, declined := r.(decline); !declined {
				panic(r)
			}
			n, ok = nil, false
		}
	}()
	p.nextContent()
	if p.ind < 0 {
		return nil, true
	}
	if p.ind != 0 || p.src[p.pos] == '%' {
		p.decline() // directives; a root node indented is left to yaml.v3
	}
	n = p.node(-1, true)
	if p.ind >= 0 {
		p.decline() // something after the root node
	}
	return n, true
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

	nodes []yaml.Node  // where new nodes are taken from
	ptrs  []*yaml.Node // where Content slices are taken from
	stack []*yaml.Node // children of the collections being parsed
}

func (p *fastParser) decline() { panic(decline{}) }

func (p *fastParser) column() int { return p.pos - p.lineStart + 1 }

func (p *fastParser) newNode(kind yaml.Kind, tag string, line, column int) *yaml.Node {
	if len(p.nodes) == cap(p.nodes) {
		p.nodes = make([]yaml.Node, 0, 64)
	}
	p.nodes = p.nodes[:len(p.nodes)+1]
	n := &p.nodes[len(p.nodes)-1]
	*n = yaml.Node{Kind: kind, Tag: tag, Line: line, Column: column} // a node of an earlier tree, in an arena
	return n
}

// content moves the children pushed since start into the node's Content.
func (p *fastParser) content(n *yaml.Node, start int) {
	k := len(p.stack) - start
	if k == 0 {
		p.stack = p.stack[:start]
		return
	}
	if cap(p.ptrs)-len(p.ptrs) < k {
		p.ptrs = make([]*yaml.Node, 0, max(256, k))
	}
	i := len(p.ptrs)
	p.ptrs = append(p.ptrs, p.stack[start:]...)
	n.Content = p.ptrs[i : i+k : i+k]
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

// node parses the node that starts at pos, in a block collection indented
// by parent (-1 at the root); block says whether the node may be a block
// mapping or sequence starting on this line (not after "key: ").
func (p *fastParser) node(parent int, block bool) *yaml.Node {
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
		n := p.flow(parent)
		p.skipSpaces()
		if p.pos < len(p.src) && p.src[p.pos] == ':' {
			p.decline() // a flow collection as a key
		}
		p.endLine()
		return n
	case c == '|':
		return p.literal(parent)
	case strings.IndexByte("&*!?:,]}#>%@`", c) >= 0:
		p.decline()
	}
	col := p.column()
	key := p.scalar(false)
	if p.pos < len(p.src) && p.src[p.pos] == ':' && p.blank(p.pos+1) {
		if !block {
			p.decline() // "a: b: c"
		}
		return p.mapping(col-1, key)
	}
	p.endLine()
	return key
}

// mapping parses a block mapping indented by ind whose first key has been
// read, pos at its ':'.
func (p *fastParser) mapping(ind int, key *yaml.Node) *yaml.Node {
	m := p.newNode(yaml.MappingNode, "!!map", key.Line, key.Column)
	start := len(p.stack)
	for {
		if key.Tag == "!!merge" || key.Column-1 != ind {
			p.decline()
		}
		p.stack = append(p.stack, key, p.after(ind, true))
		if p.ind < ind {
			break
		}
		if p.ind > ind {
			p.decline()
		}
		if c := p.src[p.pos]; c == '-' || c == '|' || c == '{' || c == '[' || strings.IndexByte("&*!?:,]}#>%@`", c) >= 0 {
			p.decline()
		}
		key = p.scalar(false)
		if p.pos >= len(p.src) || p.src[p.pos] != ':' || !p.blank(p.pos+1) {
			p.decline()
		}
	}
	p.content(m, start)
	return m
}

// after parses the node after a key's ':' (key) or an item's '-', at pos,
// in a block collection indented by ind: on the same line, on the lines
// below indented deeper (or, after a key, a sequence indented by ind), or
// none, an empty scalar where yaml.v3 puts it: just after the indicator.
func (p *fastParser) after(ind int, key bool) *yaml.Node {
	line, column := p.line, p.column()+1
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
	return p.newNode(yaml.ScalarNode, "!!null", line, column)
}

// sequence parses a block sequence whose first '-' is at pos.
func (p *fastParser) sequence() *yaml.Node {
	ind := p.pos - p.lineStart
	s := p.newNode(yaml.SequenceNode, "!!seq", p.line, p.column())
	start := len(p.stack)
	for {
		p.stack = append(p.stack, p.after(ind, false))
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
	p.content(s, start)
	return s
}

// scalar reads a plain or quoted scalar that ends on its line, pos then
// after it (and after the spaces that follow a plain one); flow says
// whether it is inside a flow collection.
func (p *fastParser) scalar(flow bool) *yaml.Node {
	line, column := p.line, p.column()
	if c := p.src[p.pos]; c == '"' || c == '\'' {
		start := p.pos
		n := p.newNode(yaml.ScalarNode, "!!str", line, column)
		if c == '"' {
			n.Value, n.Style = p.doubleQuoted(), yaml.DoubleQuotedStyle
		} else {
			n.Value, n.Style = p.singleQuoted(), yaml.SingleQuotedStyle
		}
		p.longKey(start)
		return n
	}
	start, end := p.pos, p.pos
	for i := p.pos; ; i++ {
		if i >= len(p.src) || p.src[i] == '\n' {
			p.pos = i
			break
		}
		c := p.src[i]
		if c == ':' && p.blank(i+1) || c == '#' && p.src[i-1] == ' ' ||
			flow && flowIndicator(c) {
			p.pos = i
			break
		}
		if c != ' ' {
			end = i + 1
		}
	}
	v := p.src[start:end]
	p.longKey(start)
	tag, ok := plainTag(v)
	if !ok {
		p.decline()
	}
	n := p.newNode(yaml.ScalarNode, tag, line, column)
	n.Value = v
	return n
}

// flowIndicator reports whether c ends a plain scalar in a flow collection.
func flowIndicator(c byte) bool {
	switch c {
	case ',', '?', '[', ']', '{', '}':
		return true
	}
	return false
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
func (p *fastParser) literal(parent int) *yaml.Node {
	if parent < 0 {
		p.decline() // a document that is a block scalar
	}
	n := p.newNode(yaml.ScalarNode, "!!str", p.line, p.column())
	n.Style = yaml.LiteralStyle
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
	n.Value = b.String()
	p.pos = p.lineStart
	p.nextContent()
	return n
}

// flow parses a flow mapping or sequence in a block collection indented by
// parent, pos at its bracket; pos is then after the closing one.
func (p *fastParser) flow(parent int) *yaml.Node {
	p.enter()
	defer func() { p.depth-- }()
	mapping := p.src[p.pos] == '{'
	n := p.newNode(yaml.SequenceNode, "!!seq", p.line, p.column())
	closing := byte(']')
	if mapping {
		n.Kind, n.Tag, closing = yaml.MappingNode, "!!map", '}'
	}
	n.Style = yaml.FlowStyle
	p.pos++
	start := len(p.stack)
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
		item := p.flowItem(parent)
		if mapping {
			if item.Kind != yaml.ScalarNode || p.line != item.Line || p.src[p.pos] != ':' || !p.blank(p.pos+1) {
				p.decline()
			}
			p.pos++
			p.flowSpace(parent)
			if c := p.src[p.pos]; c == ',' || c == closing {
				p.decline() // an empty value
			}
			p.stack = append(p.stack, item, p.flowItem(parent))
		} else {
			if p.src[p.pos] == ':' {
				p.decline() // a pair in a sequence
			}
			p.stack = append(p.stack, item)
		}
	}
	p.pos++
	p.content(n, start)
	return n
}

// flowItem reads a scalar or a nested collection in a flow collection and
// the spaces after it.
func (p *fastParser) flowItem(parent int) *yaml.Node {
	var n *yaml.Node
	c := p.src[p.pos]
	switch {
	case c == '{' || c == '[':
		n = p.flow(parent)
	case strings.IndexByte("&*!?|>%@`#:,]}", c) >= 0 || c == '-' && p.blank(p.pos+1):
		// In a flow, ':' is always a value indicator, '?' always a key's.
		p.decline()
	default:
		n = p.scalar(true)
	}
	p.flowSpace(parent)
	return n
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
func plainTag(s string) (tag string, ok bool) {
	if s == "" {
		return "!!null", true
	}
	switch c := s[0]; {
	case c == '+' || c == '-' || c >= '0' && c <= '9':
		return numberTag(s)
	case c == '.':
		switch s {
		case ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF":
			return "!!float", true
		}
		if _, err := strconv.ParseFloat(s, 64); err == nil {
			return "!!float", true
		}
	case c == '<' && s == "<<":
		return "", false
	case c == '~' || c == 'n' || c == 'N':
		switch s {
		case "~", "null", "Null", "NULL":
			return "!!null", true
		}
	case c == 't' || c == 'T' || c == 'f' || c == 'F':
		switch s {
		case "true", "True", "TRUE", "false", "False", "FALSE":
			return "!!bool", true
		}
	}
	return "!!str", true
}

// numberTag resolves a plain scalar that starts with a sign or a digit.
func numberTag(s string) (string, bool) {
	switch s {
	case "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF":
		return "!!float", true
	}
	if len(s) > 4 && s[4] == '-' && strings.Trim(s[:4], "0123456789") == "" {
		return "", false // maybe a timestamp
	}
	if strings.Trim(s, "0123456789abcdefABCDEFxXoO_+-.") != "" {
		return "!!str", true // 500m, 1Gi, v1.2.3: not a number yaml.v3 reads
	}
	plain := strings.ReplaceAll(s, "_", "")
	if _, err := strconv.ParseInt(plain, 0, 64); err == nil {
		return "!!int", true
	}
	if _, err := strconv.ParseUint(plain, 0, 64); err == nil {
		return "!!int", true
	}
	if yamlFloat(plain) {
		if _, err := strconv.ParseFloat(plain, 64); err == nil {
			return "!!float", true
		}
		return "", false // out of range: left to yaml.v3
	}
	for _, prefix := range []struct {
		p    string
		base int
	}{{"0b", 2}, {"-0b", 2}, {"0o", 8}, {"-0o", 8}} {
		if rest, found := strings.CutPrefix(plain, prefix.p); found {
			if _, err := strconv.ParseUint(rest, prefix.base, 64); err == nil {
				return "", false // binary and octal numbers are left to yaml.v3
			}
		}
	}
	return "!!str", true
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
