// Package spool keeps the findings of a check too large to hold in memory:
// an external merge sort. Findings are held until they take Limit bytes,
// then sorted and written to a temporary file as a run; reading merges the
// runs, so that memory stays flat however many objects were checked.
package spool

import (
	"bufio"
	"cmp"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"maps"
	"slices"

	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// DefaultLimit is how many bytes of findings are held before a run is
// written: about 10,000 findings. A run is read back through a buffer of
// 16 KB, so that a million findings, a hundred runs, take 1.6 MB to merge.
const DefaultLimit = 4 << 20

// Findings sorts findings by rules.CompareFindings, stably. Add them, then
// range over All as many times as needed; Close removes the file.
type Findings struct {
	// Limit is how many bytes of findings are held in memory (estimated);
	// 0 means DefaultLimit.
	Limit int
	// Dir is where the temporary file goes; "" means os.TempDir.
	Dir string

	rules map[string]*rules.Rule
	held  []rules.Finding
	size  int
	n     int
	temp
	runs []run
	// sorted is true while held is in order.
	sorted bool
	// full is true once a run could not be written: the findings stay in
	// memory from then on.
	full  bool
	worst rules.Severity
	err   error
}

// run is one sorted run of the file.
type run struct{ offset, size int64 }

// New returns a spool whose findings name the rules of rs (a finding's rule
// is written as its ID).
func New(rs []*rules.Rule) *Findings {
	s := &Findings{rules: map[string]*rules.Rule{}}
	for _, r := range rs {
		s.rules[r.ID] = r
	}
	return s
}

// Add keeps a finding, writing a run when Limit is reached.
func (s *Findings) Add(f rules.Finding) {
	if f.Rule != nil && s.rules[f.Rule.ID] == nil {
		s.rules[f.Rule.ID] = f.Rule
	}
	s.held = append(s.held, f)
	s.sorted = false
	s.n++
	s.worst = max(s.worst, f.Severity)
	s.size += 256 + len(f.Message) + len(f.Path)
	for k, v := range f.Details {
		s.size += 64 + len(k) + len(v)
	}
	if s.size >= cmp.Or(s.Limit, DefaultLimit) && !s.full {
		s.trySpill()
	}
}

// Len returns how many findings were added.
func (s *Findings) Len() int { return s.n }

// Worst returns the highest severity of the findings added, 0 for none.
func (s *Findings) Worst() rules.Severity { return s.worst }

// Err returns the first error reading the file. After one, All stops
// early: the caller must check Err once done.
func (s *Findings) Err() error { return s.err }

// fail keeps the first error reading the file.
func (s *Findings) fail(err error) {
	if s.err == nil {
		s.err = fmt.Errorf("reading the findings spilled to %s: %w", s.where(), err)
	}
}

// Close removes the file, if a run was written.
func (s *Findings) Close() error {
	if err := s.close(); err != nil {
		return fmt.Errorf("removing the findings spilled to disk: %w", err)
	}
	return nil
}

// All yields every finding added, in order. Once a run was written, the
// findings still held are written too, and every call reads the file.
func (s *Findings) All() iter.Seq[rules.Finding] {
	if s.runs == nil {
		s.sortHeld()
		return slices.Values(s.held)
	}
	if len(s.held) > 0 && !s.full {
		s.trySpill()
	}
	return s.merge
}

// trySpill writes a run; when it cannot, it says so once and keeps the
// findings in memory, as they would be without a spool.
func (s *Findings) trySpill() {
	if err := s.spill(); err != nil {
		s.full = true
		slog.Warn("the findings stay in memory", "error", err)
	}
}

// sortHeld sorts the findings held, unless they are in order already.
func (s *Findings) sortHeld() {
	if !s.sorted {
		slices.SortStableFunc(s.held, rules.CompareFindings)
		s.sorted = true
	}
}

// spill writes the findings held as a sorted run at the end of the file.
func (s *Findings) spill() error {
	if err := s.create(s.Dir, "fargatekit-findings-*"); err != nil {
		return fmt.Errorf("spilling findings to disk: %w", err)
	}
	s.sortHeld()
	offset, err := s.file.Seek(0, io.SeekEnd)
	if err != nil {
		return fmt.Errorf("spilling findings to %s: %w", s.where(), err)
	}
	w := bufio.NewWriterSize(s.file, 64<<10)
	var buf []byte
	for _, f := range s.held {
		buf = appendFinding(buf[:0], f)
		if _, err := w.Write(buf); err != nil {
			return fmt.Errorf("spilling findings to %s: %w", s.where(), err)
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("spilling findings to %s: %w", s.where(), err)
	}
	end, err := s.file.Seek(0, io.SeekCurrent)
	if err != nil {
		return fmt.Errorf("spilling findings to %s: %w", s.where(), err)
	}
	s.runs = append(s.runs, run{offset, end - offset})
	clear(s.held)
	s.held, s.size = s.held[:0], 0
	return nil
}

// merge yields the runs' findings in order; ties go to the earlier run,
// which keeps the sort stable.
func (s *Findings) merge(yield func(rules.Finding) bool) {
	h := make(heads, 0, len(s.runs)+1)
	sources := make([]*decoder, 0, len(s.runs)+1)
	for i, r := range s.runs {
		sources = append(sources, &decoder{r: bufio.NewReaderSize(io.NewSectionReader(s.file, r.offset, r.size), 16<<10), rules: s.rules, run: i})
	}
	if len(s.held) > 0 { // a run that could not be written
		s.sortHeld()
		sources = append(sources, &decoder{held: s.held, run: len(s.runs)})
	}
	for _, d := range sources {
		if d.next() {
			h = append(h, d)
		} else if d.err != nil {
			s.fail(d.err)
			return
		}
	}
	heap.Init(&h)
	for len(h) > 0 {
		d := h[0]
		if !yield(d.cur) {
			return
		}
		if d.next() {
			heap.Fix(&h, 0)
			continue
		}
		if d.err != nil {
			s.fail(d.err)
			return
		}
		heap.Pop(&h)
	}
}

// heads is a min-heap of the runs being merged, by their current finding.
type heads []*decoder

func (h heads) Len() int { return len(h) }
func (h heads) Less(i, j int) bool {
	if c := rules.CompareFindings(h[i].cur, h[j].cur); c != 0 {
		return c < 0
	}
	return h[i].run < h[j].run
}
func (h heads) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *heads) Push(x any)   { *h = append(*h, x.(*decoder)) }
func (h *heads) Pop() any {
	old := *h
	d := old[len(old)-1]
	*h = old[:len(old)-1]
	return d
}

// A finding on disk is its strings, each a length and bytes, and its
// numbers, as varints: rule ID, severity, the object's API version, kind,
// namespace and name, file, line, path, message, then the number of details
// and each key and value, in key order.

func appendFinding(b []byte, f rules.Finding) []byte {
	id := ""
	if f.Rule != nil {
		id = f.Rule.ID
	}
	b = appendString(b, id)
	b = binary.AppendUvarint(b, uint64(f.Severity))
	for _, v := range []string{f.Object.APIVersion, f.Object.Kind, f.Object.Namespace, f.Object.Name, f.Source.File} {
		b = appendString(b, v)
	}
	b = binary.AppendVarint(b, int64(f.Source.Line))
	b = appendString(b, f.Path)
	b = appendString(b, f.Message)
	b = binary.AppendUvarint(b, uint64(len(f.Details)))
	for _, k := range slices.Sorted(maps.Keys(f.Details)) {
		b = appendString(appendString(b, k), f.Details[k])
	}
	return b
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// decoder reads one run: from the file, or, when r is nil, from held.
// Consecutive findings mostly share their object and file, so a string
// equal to the one before is not allocated again.
type decoder struct {
	r     *bufio.Reader
	held  []rules.Finding
	rules map[string]*rules.Rule
	run   int
	cur   rules.Finding
	buf   []byte
	err   error
}

// next reads the next finding into cur; false at the end of the run or on
// an error (err).
func (d *decoder) next() bool {
	if d.r == nil {
		if len(d.held) == 0 {
			return false
		}
		d.cur, d.held = d.held[0], d.held[1:]
		return true
	}
	if _, err := d.r.Peek(1); err != nil {
		if !errors.Is(err, io.EOF) {
			d.err = err
		}
		return false
	}
	prev := d.cur
	var f rules.Finding
	id := d.string("")
	if d.err == nil && id != "" {
		if f.Rule = d.rules[id]; f.Rule == nil {
			d.err = fmt.Errorf("a finding of unknown rule %q", id)
		}
	}
	f.Severity = rules.Severity(d.uvarint())
	f.Object = object.Ref{
		APIVersion: d.string(prev.Object.APIVersion), Kind: d.string(prev.Object.Kind),
		Namespace: d.string(prev.Object.Namespace), Name: d.string(prev.Object.Name),
	}
	f.Source.File = d.string(prev.Source.File)
	line, err := binary.ReadVarint(d.r)
	d.fail(err)
	f.Source.Line = int(line)
	f.Path = d.string(prev.Path)
	f.Message = d.string("")
	if n := d.uvarint(); n > 0 && d.err == nil {
		f.Details = make(map[string]string, min(n, 64))
		for i := uint64(0); i < n && d.err == nil; i++ {
			k := d.string("")
			f.Details[k] = d.string("")
		}
	}
	d.cur = f
	return d.err == nil
}

func (d *decoder) fail(err error) {
	if err != nil && d.err == nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		d.err = err
	}
}

func (d *decoder) uvarint() uint64 {
	v, err := binary.ReadUvarint(d.r)
	d.fail(err)
	return v
}

// string reads a string, returning same rather than a copy when equal.
func (d *decoder) string(same string) string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > 1<<30 {
		d.fail(fmt.Errorf("a string of %d bytes", n))
		return ""
	}
	d.buf = slices.Grow(d.buf[:0], int(n))[:n]
	if _, err := io.ReadFull(d.r, d.buf); err != nil {
		d.fail(err)
		return ""
	}
	if string(d.buf) == same {
		return same
	}
	return string(d.buf)
}
