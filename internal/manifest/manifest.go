package manifest

import (
	"fmt"
	"io"
	"io/fs"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"

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
	// NotManifest marks the problem of a document that is no Kubernetes
	// object at all (a list, a scalar, no apiVersion and kind).
	NotManifest bool `json:"-"`
}

func (e Error) Error() string {
	if e.File == "" { // a problem with no file: a cluster that could not be read
		return e.Message
	}
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
	// still read. root is the input's Root: what Expand reads must stay
	// inside it.
	Expand func(path string, info fs.FileInfo, root string) (docs []Document, handled bool, err error)
	// OnFile, if set, is called for each file, and each path Expand handled,
	// in input order.
	OnFile func(path string)
	// SkipNonManifests drops, without an error, a file (or standard input)
	// that holds no Kubernetes object: every document of it is a list, a
	// scalar, or an object without apiVersion and kind (a CI configuration,
	// Helm values). Inputs of such files only are then no error; inputs with
	// no file at all still are.
	SkipNonManifests bool
	// Workers is how many files are parsed at once, and how many parts of
	// a large file or chart (partBytes); 0 means GOMAXPROCS. Objects and
	// errors are still emitted in input order, one at a time.
	//
	// Skip and Expand are called on the goroutine that called Load, one
	// call at a time, while objects read earlier are emitted.
	Workers int
	// Prepare, if set, is called for each object on the goroutine that
	// parsed it, before the object is emitted: for objects of different
	// files, or parts of one, at once. It is where per-object work runs in
	// parallel.
	Prepare func(*object.Object)
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
// from being read. The calls (and OnFile's) come one at a time, each after
// the one before it has returned, but not always on the same goroutine:
// from the Loader's workers, or from the goroutine that called Load once it
// has walked every path; meanwhile Skip, Expand and Prepare run on others.
func (l *Loader) Load(paths []string, emitObject func(*object.Object), failWith func(Error)) {
	// An input without any object is an error: a failed `helm template` piped
	// in, or the wrong directory, must not pass as "no findings". Files that
	// SkipNonManifests skipped were read, and found to hold none.
	objects, problems, skipped := 0, 0, 0
	defer func() {
		if objects == 0 && problems == 0 && skipped == 0 && len(paths) > 0 {
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
	}, emit, fail, func() { skipped++ })
}

// unit is one piece of the loader's work, parsed by one worker: a file to
// read, the documents Expand made of a path, or problems.
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
	data, err := l.readAll(l.Stdin, 0)
	if err != nil {
		return unit{errors: []Error{{File: StdinName, Message: err.Error()}}}
	}
	return unit{docs: []Document{{File: StdinName, Data: data}}}
}

// part is what some documents of a unit held, in their order.
type part struct {
	objects []*object.Object
	errors  []Error
}

// partBytes is the least size of a part: a unit whose documents are larger
// is parsed in parts, on several goroutines, and each part's objects are
// emitted as soon as it and those before it are done. Whole, one file of
// 20,000 objects took one core and 440–493 MB.
const partBytes = 256 << 10

// piece is a document to parse, with the file it is reported at, or a
// problem met before any document of a file.
type piece struct {
	file string
	doc  document
	err  *Error
}

// pieces reads a unit: its documents and problems, in order, the size of
// the documents, and the buffer of the file it read (to release once they
// are parsed).
func (l *Loader) pieces(u unit) (ps []piece, size int, read []byte) {
	add := func(file string, data []byte) {
		docs, err := documents(file, data)
		if err != nil {
			ps = append(ps, piece{err: err})
			return
		}
		for _, d := range docs {
			ps = append(ps, piece{file: file, doc: d})
			size += len(d.data)
		}
	}
	if u.read {
		if data, err := l.readFile(u.path); err != nil {
			ps = append(ps, piece{err: &Error{File: u.path, Message: err.Error()}})
		} else {
			add(u.path, data)
			read = data
		}
	}
	for _, d := range u.docs {
		add(d.File, d.Data)
	}
	return ps, size, read
}

// parseUnit sends the parts of a unit, in order, parsing up to workers
// parts at once.
func (l *Loader) parseUnit(u unit, workers int, send func(part)) {
	ps, size, read := l.pieces(u)
	defer release(read)
	if size <= partBytes {
		send(l.parsePart(ps))
		return
	}
	parts := make(chan chan part, workers)
	go func() {
		defer close(parts)
		for len(ps) > 0 {
			n, sum := 0, 0
			for n < len(ps) && sum < partBytes {
				sum += len(ps[n].doc.data)
				n++
			}
			ch := make(chan part, 1)
			parts <- ch
			go func(ps []piece) { ch <- l.parsePart(ps) }(ps[:n])
			ps = ps[n:]
		}
	}()
	for ch := range parts {
		send(<-ch)
	}
}

func (l *Loader) parsePart(ps []piece) part {
	var p part
	emit := func(o *object.Object) {
		if l.Prepare != nil {
			l.Prepare(o)
		}
		p.objects = append(p.objects, o)
	}
	fail := func(e Error) { p.errors = append(p.errors, e) }
	for _, pc := range ps {
		if pc.err != nil {
			fail(*pc.err)
			continue
		}
		parseDocument(pc.file, pc.doc, emit, fail)
	}
	return p
}

// aheadPerWorker is how many units per worker may be parsed ahead of the
// one being emitted. The goroutine emitting stops a few milliseconds now and
// then (to write a run of findings to disk) while the others parse on: with
// 4, the cores of a check of 100,000 objects on two stood idle twice as long
// while files were parsed as with 8 or 16.
const aheadPerWorker = 8

// pendingUnit is a unit to parse, or being parsed: its parts come on parts,
// which is closed after the last.
type pendingUnit struct {
	unit  unit
	parts chan part
}

// parse parses the units produce adds, Workers at a time, and emits their
// objects and errors in input order: a unit's objects, then its errors.
// produce runs on the calling goroutine. Units are parsed in the order they
// come, at most aheadPerWorker×Workers ahead of the one being emitted:
// enough that the workers need not wait for a slow unit to be emitted, few
// enough that memory does not grow with the number of files; and a large
// unit in parts (partBytes), whose objects are emitted a part at a time.
//
// The workers are goroutines that each take the next unit as soon as they
// are done with one, and emit what is ready themselves (an inOrder). On two
// cores, a third goroutine that only emitted fell behind them (it waited
// for a core while they ran), and they then ran out of units to parse ahead
// of it.
func (l *Loader) parse(produce func(add func(unit)), emit func(*object.Object), fail func(Error), skip func()) {
	workers := l.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	o := &inOrder{l: l, emit: emit, fail: fail, skip: skip, finished: make(chan struct{}),
		pending: make(chan pendingUnit, aheadPerWorker*workers)}
	work := make(chan pendingUnit, aheadPerWorker*workers)
	for range workers {
		go func() {
			for p := range work {
				l.parseUnit(p.unit, workers, func(pt part) { p.parts <- pt; o.ready() })
				close(p.parts)
				o.ready()
			}
		}()
	}
	produce(func(u unit) {
		p := pendingUnit{unit: u, parts: make(chan part, 1)}
		o.pending <- p
		work <- p
	})
	close(work)
	close(o.pending)
	o.ready()
	<-o.finished
}

// inOrder emits the parts of pending units in input order, from whichever
// goroutine made the next of them ready: ready is called after each change
// (a part sent, a unit's parts closed, pending closed), and the goroutine
// whose call finds no other emitting emits everything ready, one goroutine
// at a time, then closes finished once pending is closed and emptied.
type inOrder struct {
	l        *Loader
	emit     func(*object.Object)
	fail     func(Error)
	skip     func()
	pending  chan pendingUnit
	finished chan struct{}
	// requests counts the calls of ready not yet served: the goroutine that
	// takes it from 0 emits until it is 0 again. Increments made while it
	// emits make it look once more, so no change is missed.
	requests atomic.Int64

	// Touched only by the goroutine emitting.
	cur     *pendingUnit // the unit being emitted
	objects int          // cur's objects emitted so far
	errs    []Error      // cur's errors, emitted after its objects
	done    bool         // finished is closed
}

func (o *inOrder) ready() {
	if o.requests.Add(1) > 1 {
		return
	}
	for {
		n := o.requests.Load()
		o.drain()
		if o.requests.Add(-n) == 0 {
			return
		}
	}
}

// drain emits every part that is ready, in order, without waiting.
func (o *inOrder) drain() {
	for !o.done {
		if o.cur == nil {
			select {
			case p, ok := <-o.pending:
				if !ok {
					o.done = true
					close(o.finished)
					return
				}
				o.cur, o.objects, o.errs = &p, 0, p.unit.errors
				if p.unit.count && o.l.OnFile != nil {
					o.l.OnFile(p.unit.path)
				}
			default:
				return
			}
		}
		select {
		case pt, ok := <-o.cur.parts:
			if ok {
				for _, obj := range pt.objects {
					o.emit(obj)
				}
				o.objects += len(pt.objects)
				o.errs = append(o.errs, pt.errors...)
				continue
			}
		default:
			return
		}
		// A unit that holds no Kubernetes object at all: dropped when asked.
		if o.l.SkipNonManifests && o.objects == 0 && len(o.errs) > 0 && !slices.ContainsFunc(o.errs, func(e Error) bool { return !e.NotManifest }) {
			o.skip()
		} else {
			for _, e := range o.errs {
				o.fail(e)
			}
		}
		o.cur, o.errs = nil, nil
	}
}
