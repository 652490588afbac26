package manifest

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// errSlowPath means a node needs the YAML library's own decoder.
var errSlowPath = errors.New("needs the library decoder")

// jsonInt reports whether s is an integer as JSON spells it:
// -?(0|[1-9][0-9]*).
func jsonInt(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return s != "" && (s[0] != '0' || len(s) == 1) && only(s, digitSet)
}

// toJSON converts a parsed YAML object to JSON. Plain documents (mappings with
// string keys, sequences, and core-schema scalars) are written directly; the
// rest (aliases, merge keys, custom tags, duplicate keys, numbers JSON cannot
// spell) go through yaml.v3's decoder and encoding/json, which also report
// their errors. The fast path exists because it halves the cost of this step
// (docs/benchmarks.md); FuzzToJSON checks that both paths agree.
func toJSON(n *yaml.Node) ([]byte, error) {
	if out, err := appendJSON(make([]byte, 0, 2048), n); err == nil {
		return out, nil
	}
	return slowJSON(n)
}

func slowJSON(n *yaml.Node) ([]byte, error) {
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

func appendJSON(b []byte, n *yaml.Node) ([]byte, error) {
	var err error
	switch n.Kind {
	case yaml.MappingNode:
		if n.Tag != "" && n.Tag != "!!map" {
			return nil, errSlowPath
		}
		if hasDuplicateKeys(n) {
			return nil, errSlowPath
		}
		b = append(b, '{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
				return nil, errSlowPath
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k.Value)
			b = append(b, ':')
			if b, err = appendJSON(b, n.Content[i+1]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case yaml.SequenceNode:
		if n.Tag != "" && n.Tag != "!!seq" {
			return nil, errSlowPath
		}
		b = append(b, '[')
		for i, c := range n.Content {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendJSON(b, c); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case yaml.ScalarNode:
		if t := slices.Index(tagNames[:], n.ShortTag()); t >= 0 {
			if b, ok := appendScalar(b, tag(t), n.Value); ok {
				return b, nil
			}
		}
	}
	return nil, errSlowPath
}

// appendScalar writes a scalar of a core-schema tag as JSON; ok is false
// for one that needs the library decoder (a number JSON cannot spell).
func appendScalar(b []byte, t tag, value string) (_ []byte, ok bool) {
	switch t {
	case strTag:
		return appendString(b, value), true
	case nullTag:
		return append(b, "null"...), true
	case boolTag:
		v, err := strconv.ParseBool(value)
		if err != nil {
			return nil, false
		}
		return strconv.AppendBool(b, v), true
	case intTag:
		if !jsonInt(value) {
			return nil, false
		}
		return append(b, value...), true
	case floatTag:
		f, err := strconv.ParseFloat(value, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, false
		}
		return strconv.AppendFloat(b, f, 'g', -1, 64), true
	}
	return nil, false
}

// hasDuplicateKeys reports whether a mapping repeats a key: by comparing
// pairs in the usual small mapping, with a set in a large one.
func hasDuplicateKeys(m *yaml.Node) bool {
	keys := len(m.Content) / 2
	if keys > 16 {
		seen := make(map[string]bool, keys)
		for i := 0; i < len(m.Content); i += 2 {
			if seen[m.Content[i].Value] {
				return true
			}
			seen[m.Content[i].Value] = true
		}
		return false
	}
	for i := 2; i < len(m.Content); i += 2 {
		for j := 0; j < i; j += 2 {
			if m.Content[j].Value == m.Content[i].Value {
				return true
			}
		}
	}
	return false
}

const hex = "0123456789abcdef"

// appendString writes s as a JSON string; s is valid UTF-8.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if plainJSON[c] {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// plainJSON are the bytes a JSON string holds as they are: ASCII but for
// control characters, '"' and '\\'.
var plainJSON = func() (t [256]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()
