package rules

import (
	"cmp"
	"encoding/binary"
	"iter"
	"math"
	"slices"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/object"
)

// Workloads keeps workload summaries compactly: each is encoded into a few
// dozen bytes of a shared buffer, with the strings that repeat from one
// workload to the next (API versions, kinds, namespaces, files, label keys,
// service accounts, profiles) stored once. A summary held as a *Workload
// takes about 700 bytes with its labels, and the garbage collector's
// headroom doubles that: a check of 100,000 objects held 140 MB of them.
// Reading decodes a new *Workload each time, and is not safe for
// concurrent use (nor is Add). The zero value is empty and ready to use; a
// nil *Workloads is empty.
type Workloads struct {
	// Spill, when set, keeps each buffer of summaries once full, so that
	// one buffer is held however many there are (check keeps them in a
	// temporary file). When it fails, the summaries stay in memory.
	Spill Spill
	// spillFailed is true once Spill could not write a buffer.
	spillFailed bool

	// chunks are the buffers: nil once spilled, their block in blocks.
	chunks [][]byte
	blocks []int
	sizes  []int
	// read holds chunk readChunk (or, when whole is false, one summary of
	// it) as last read from Spill.
	read      []byte
	readChunk int
	err       error
	// keys place each summary, in the order added: its index there is its
	// number, which indexes such as Cluster.Selected's keep.
	keys []workloadKey
	// dynamic are the numbers of the summaries with DynamicVolumes.
	dynamic []uint32
	// order is the order of Sorted, when it is not the order added.
	order []uint32
	// inOrder is true while the order added is the order of Sorted.
	inOrder bool
	strs    []string
	ids     map[string]uint32
}

// Spill keeps buffers of workload summaries out of memory.
type Spill interface {
	// Write keeps a copy of b and returns its number; it must not keep b,
	// which Add fills again.
	Write(b []byte) (int, error)
	// ReadAt reads len(b) bytes of buffer i, from offset off in it. It
	// may be called from several goroutines at once (All reads ahead).
	ReadAt(i int, b []byte, off int) error
}

// workloadKey places one summary: in its chunk, and, for Sorted, by file
// and line.
type workloadKey struct {
	file, chunk, at uint32
	line            int32
}

// chunkSize is the size from which the summaries go to a new buffer.
const chunkSize = 256 << 10

// NewWorkloads returns the summaries ws, kept compactly in memory.
func NewWorkloads(ws ...*Workload) *Workloads {
	s := &Workloads{}
	for _, w := range ws {
		s.Add(w)
	}
	return s
}

// Add keeps w. Later changes to w are not seen.
func (s *Workloads) Add(w *Workload) {
	if s.ids == nil {
		s.ids = map[string]uint32{}
	}
	n := len(s.chunks)
	if n == 0 || len(s.chunks[n-1]) >= chunkSize {
		var next []byte
		if n > 0 && s.Spill != nil && !s.spillFailed {
			full := s.chunks[n-1]
			if block, err := s.Spill.Write(full); err != nil {
				s.spillFailed = true
			} else {
				s.chunks[n-1], s.blocks[n-1], next = nil, block, full[:0]
			}
		}
		s.chunks, s.blocks, s.sizes = append(s.chunks, next), append(s.blocks, -1), append(s.sizes, 0)
		n++
	}
	k := workloadKey{file: s.id(w.Source.File), line: int32(min(w.Source.Line, math.MaxInt32)), chunk: uint32(n - 1), at: uint32(len(s.chunks[n-1]))}
	s.chunks[n-1] = s.append(s.chunks[n-1], w)
	s.sizes[n-1] = len(s.chunks[n-1])
	s.inOrder = len(s.keys) == 0 || s.inOrder && s.compare(s.keys[len(s.keys)-1], k) <= 0
	if len(w.DynamicVolumes) > 0 {
		s.dynamic = append(s.dynamic, uint32(len(s.keys)))
	}
	s.keys = append(s.keys, k)
	s.order = nil
}

// Len returns how many summaries were added.
func (s *Workloads) Len() int {
	if s == nil {
		return 0
	}
	return len(s.keys)
}

// Err returns the first error reading the summaries back from Spill. After
// one, All, Sorted and Cluster.Selected stop early, and yield nothing from
// Spill again: the caller must check Err once done.
func (s *Workloads) Err() error {
	if s == nil {
		return nil
	}
	return s.err
}

// All yields the summaries in the order they were added. They are read
// and decoded on a goroutine of their own, a few batches ahead of those
// yielded, so that a pass over all of them (a cluster rule's, the
// report's) uses two cores: at 100,000 summaries, reading and decoding
// them was half the time of the cluster rules, which run on one core once
// every object is read.
func (s *Workloads) All() iter.Seq[*Workload] {
	return func(yield func(*Workload) bool) {
		if s.Len() == 0 {
			return
		}
		ahead := make(chan []*Workload, 2)
		stop := make(chan struct{})
		var err error // read once ahead is closed
		go func(failed bool) {
			defer close(ahead)
			err = s.decodeAll(failed, ahead, stop)
		}(s.err != nil)
		defer func() {
			close(stop)
			for range ahead { // until the goroutine is done
			}
			if err != nil && s.err == nil {
				s.err = err
			}
		}()
		for batch := range ahead {
			for _, w := range batch {
				if !yield(w) || s.err != nil {
					return
				}
			}
		}
	}
}

// aheadBatch is how many summaries All decodes ahead at a time.
const aheadBatch = 256

// decodeAll decodes the summaries in order and sends them to ahead in
// batches, until stop is closed or a read from Spill fails (its error is
// returned); when failed, it reads nothing from Spill. It does not touch
// what at keeps, so that at may run meanwhile.
func (s *Workloads) decodeAll(failed bool, ahead chan<- []*Workload, stop <-chan struct{}) error {
	var read []byte
	i := 0
	for c, data := range s.chunks {
		if s.blocks[c] >= 0 {
			if failed {
				return nil
			}
			read = slices.Grow(read[:0], s.sizes[c])[:s.sizes[c]]
			if err := s.Spill.ReadAt(s.blocks[c], read, 0); err != nil {
				return err
			}
			data = read
		}
		for i < len(s.keys) && s.keys[i].chunk == uint32(c) {
			batch := make([]*Workload, 0, aheadBatch)
			for ; len(batch) < aheadBatch && i < len(s.keys) && s.keys[i].chunk == uint32(c); i++ {
				batch = append(batch, s.decode(data[s.keys[i].at:]))
			}
			select {
			case ahead <- batch:
			case <-stop:
				return nil
			}
		}
	}
	return nil
}

// WithDynamicVolumes yields the summaries that have DynamicVolumes, in the
// order they were added: it reads only those.
func (s *Workloads) WithDynamicVolumes() iter.Seq[*Workload] {
	return func(yield func(*Workload) bool) {
		if s == nil {
			return
		}
		for j, i := range s.dynamic {
			// Read the buffer whole when the next one is in it too.
			whole := j+1 < len(s.dynamic) && s.keys[s.dynamic[j+1]].chunk == s.keys[i].chunk
			if w := s.at(int(i), whole); w == nil || !yield(w) {
				return
			}
		}
	}
}

// Sorted yields the summaries by file and line; those of one file and line
// in the order they were added.
func (s *Workloads) Sorted() iter.Seq[*Workload] {
	return func(yield func(*Workload) bool) {
		if s.Len() == 0 || s.inOrder {
			s.All()(yield)
			return
		}
		if s.order == nil {
			s.order = make([]uint32, len(s.keys))
			for i := range s.order {
				s.order[i] = uint32(i)
			}
			slices.SortStableFunc(s.order, func(a, b uint32) int { return s.compare(s.keys[a], s.keys[b]) })
		}
		for _, i := range s.order {
			if w := s.at(int(i), false); w == nil || !yield(w) {
				return
			}
		}
	}
}

func (s *Workloads) compare(a, b workloadKey) int {
	if a.file != b.file {
		return cmp.Compare(s.strs[a.file], s.strs[b.file])
	}
	return cmp.Compare(a.line, b.line)
}

// at decodes the i-th summary added; nil after an error reading it. A
// summary spilled is read with the rest of its buffer when whole is true
// (for reads in the order added, which read the next ones next), or alone
// (for reads here and there), unless its buffer was the last read.
func (s *Workloads) at(i int, whole bool) *Workload {
	k := s.keys[i]
	if s.blocks[k.chunk] < 0 {
		return s.decode(s.chunks[k.chunk][k.at:])
	}
	if s.err != nil {
		return nil
	}
	if s.readChunk != int(k.chunk) || s.read == nil {
		s.readChunk = -1 // until read whole
		from, to := 0, s.sizes[k.chunk]
		if !whole {
			from = int(k.at)
			if i+1 < len(s.keys) && s.keys[i+1].chunk == k.chunk {
				to = int(s.keys[i+1].at)
			}
		}
		s.read = slices.Grow(s.read[:0], to-from)[:to-from]
		if err := s.Spill.ReadAt(s.blocks[k.chunk], s.read, from); err != nil {
			s.err = err
			return nil
		}
		if !whole {
			return s.decode(s.read)
		}
		s.readChunk = int(k.chunk)
	}
	return s.decode(s.read[k.at:])
}

// id returns the number of a repeated string, adding it to the table.
func (s *Workloads) id(v string) uint32 {
	if id, ok := s.ids[v]; ok {
		return id
	}
	id := uint32(len(s.strs))
	s.strs = append(s.strs, v)
	s.ids[v] = id
	return id
}

// A summary is encoded field by field, in the order of the struct: numbers
// as varints, booleans as one byte of flags, repeated strings as their
// number in the table (id) and the others as a length and bytes (str),
// floats as the 8 bytes of their bits.

const (
	flagFargate = 1 << iota
	flagByLabel
	flagFits
	flagNothingRequested
)

// encoder appends one summary to b.
type encoder struct {
	s *Workloads
	b []byte
}

func (e *encoder) id(v string)   { e.uint(uint64(e.s.id(v))) }
func (e *encoder) str(v string)  { e.uint(uint64(len(v))); e.b = append(e.b, v...) }
func (e *encoder) uint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) int(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) float(v float64) {
	e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(v))
}

func flag(on bool, bit byte) byte {
	if on {
		return bit
	}
	return 0
}

func (s *Workloads) append(b []byte, w *Workload) []byte {
	e := encoder{s: s, b: b}
	e.id(w.Ref.APIVersion)
	e.id(w.Ref.Kind)
	e.id(w.Ref.Namespace)
	e.str(w.Ref.Name)
	e.id(w.Source.File)
	e.int(int64(w.Source.Line))
	e.id(w.Namespace)
	e.uint(uint64(len(w.Labels)))
	var buf [8]string
	keys := buf[:0]
	for k := range w.Labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		e.id(k)
		e.str(w.Labels[k])
	}
	e.int(int64(w.Replicas))
	e.b = append(e.b, flag(w.Placement.Fargate, flagFargate)|flag(w.Placement.ByLabel, flagByLabel)|
		flag(w.Sizing.Fits, flagFits)|flag(w.Sizing.NothingRequested, flagNothingRequested))
	e.id(w.Placement.Profile)
	e.uint(uint64(len(w.Placement.Matching)))
	for _, m := range w.Placement.Matching {
		e.id(m)
	}
	e.id(w.Placement.Reason)
	z := w.Sizing
	for _, n := range [...]int64{z.RequestedMilliCPU, z.RequestedMemoryMiB, z.Provisioned.MilliCPU, z.Provisioned.MemoryMiB, z.EphemeralGiB} {
		e.int(n)
	}
	e.float(w.HourlyCostUSD)
	e.float(w.MonthlyCostUSD)
	e.float(w.Unrequested)
	e.id(w.ServiceAccount)
	e.uint(uint64(len(w.Claims)))
	for _, c := range w.Claims {
		e.str(c)
	}
	e.uint(uint64(len(w.DynamicVolumes)))
	for _, v := range w.DynamicVolumes {
		e.str(v.Name)
		e.b = append(e.b, flag(v.Ephemeral, 1)|flag(v.StorageClass != nil, 2))
		if v.StorageClass != nil {
			e.id(*v.StorageClass)
		}
		e.int(int64(v.Line))
	}
	e.uint(uint64(len(w.Refusals)))
	for _, r := range w.Refusals {
		e.id(string(r.Kind))
		e.id(r.Reason)
		e.str(r.Field)
		e.str(r.Detail)
	}
	return e.b
}

// decoder reads one summary, which append wrote: it reads without checks.
type decoder struct {
	s *Workloads
	b []byte
}

func (d *decoder) uint() uint64 {
	v, n := binary.Uvarint(d.b)
	d.b = d.b[n:]
	return v
}

func (d *decoder) int() int64 {
	v, n := binary.Varint(d.b)
	d.b = d.b[n:]
	return v
}

func (d *decoder) id() string { return d.s.strs[d.uint()] }

func (d *decoder) str() string {
	n := d.uint()
	v := string(d.b[:n])
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte() byte {
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) float() float64 {
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return math.Float64frombits(v)
}

// decode reads the summary at the start of b.
func (s *Workloads) decode(b []byte) *Workload {
	d := decoder{s: s, b: b}
	w := &Workload{}
	w.Ref = object.Ref{APIVersion: d.id(), Kind: d.id(), Namespace: d.id(), Name: d.str()}
	w.Source = object.Source{File: d.id(), Line: int(d.int())}
	w.Namespace = d.id()
	if n := d.uint(); n > 0 {
		w.Labels = make(map[string]string, n)
		for range n {
			k := d.id()
			w.Labels[k] = d.str()
		}
	}
	w.Replicas = int(d.int())
	flags := d.byte()
	w.Placement = fargate.Placement{Fargate: flags&flagFargate != 0, ByLabel: flags&flagByLabel != 0, Profile: d.id()}
	if n := d.uint(); n > 0 {
		w.Placement.Matching = make([]string, n)
		for i := range w.Placement.Matching {
			w.Placement.Matching[i] = d.id()
		}
	}
	w.Placement.Reason = d.id()
	w.Sizing = fargate.Sizing{
		RequestedMilliCPU: d.int(), RequestedMemoryMiB: d.int(), Provisioned: fargate.Size{MilliCPU: d.int(), MemoryMiB: d.int()},
		EphemeralGiB: d.int(), Fits: flags&flagFits != 0, NothingRequested: flags&flagNothingRequested != 0,
	}
	w.HourlyCostUSD, w.MonthlyCostUSD, w.Unrequested = d.float(), d.float(), d.float()
	w.ServiceAccount = d.id()
	if n := d.uint(); n > 0 {
		w.Claims = make([]string, n)
		for i := range w.Claims {
			w.Claims[i] = d.str()
		}
	}
	if n := d.uint(); n > 0 {
		w.DynamicVolumes = make([]DynamicVolume, n)
		for i := range w.DynamicVolumes {
			v := &w.DynamicVolumes[i]
			v.Name = d.str()
			f := d.byte()
			v.Ephemeral = f&1 != 0
			if f&2 != 0 {
				class := d.id()
				v.StorageClass = &class
			}
			v.Line = int(d.int())
		}
	}
	if n := d.uint(); n > 0 {
		w.Refusals = make([]fargate.Refusal, n)
		for i := range w.Refusals {
			w.Refusals[i] = fargate.Refusal{Kind: fargate.RefusalKind(d.id()), Reason: d.id(), Field: d.str(), Detail: d.str()}
		}
	}
	return w
}
