package report

import (
	"bytes"
	"errors"
	"fmt"
	"iter"
	"runtime"
	"strings"
	"testing"
)

// counted yields 0 to n-1 and counts how many it yielded.
func counted(n int, yielded *int) iter.Seq[int] {
	return func(yield func(int) bool) {
		for i := range n {
			*yielded++
			if !yield(i) {
				return
			}
		}
	}
}

// TestWriteArray: on one to four cores, writeArray writes the elements in
// order however the batches were encoded, and the array's brackets as the
// whole report's Encoder would.
func TestWriteArray(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, n := range []int{0, 1, arrayBatch, 5*arrayBatch + 3} {
		want := `  "xs": [],` + "\n"
		if n > 0 {
			var b strings.Builder
			b.WriteString(`  "xs": [`)
			for i := range n {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, "\n    %d", i)
			}
			b.WriteString("\n  ],\n")
			want = b.String()
		}
		for procs := 1; procs <= 4; procs++ {
			runtime.GOMAXPROCS(procs)
			var out bytes.Buffer
			yielded := 0
			if err := writeArray(&out, "xs", counted(n, &yielded), func(i int) int { return i }); err != nil {
				t.Fatalf("%d elements, %d cores: %v", n, procs, err)
			}
			if out.String() != want || yielded != n {
				t.Errorf("%d elements, %d cores: %d read, wrote\n%s\nwant\n%s", n, procs, yielded, out.String(), want)
			}
		}
	}
}

// failAfter fails every write after the first n.
type failAfter struct{ n int }

var errWrite = errors.New("disk full")

func (w *failAfter) Write(p []byte) (int, error) {
	if w.n == 0 {
		return 0, errWrite
	}
	w.n--
	return len(p), nil
}

// TestWriteArrayErrors: a write or an encoding that fails is the error
// writeArray returns, and the reading stops soon after it rather than
// going through the whole sequence.
func TestWriteArrayErrors(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	const n = 200 * arrayBatch
	for procs := 1; procs <= 4; procs++ {
		runtime.GOMAXPROCS(procs)
		yielded := 0
		err := writeArray(&failAfter{n: 3}, "xs", counted(n, &yielded), func(i int) int { return i })
		if !errors.Is(err, errWrite) || yielded >= n {
			t.Errorf("failing writer, %d cores: %v after reading %d of %d", procs, err, yielded, n)
		}
		yielded = 0
		err = writeArray(&bytes.Buffer{}, "xs", counted(n, &yielded), func(i int) any {
			if i == 2*arrayBatch {
				return make(chan int) // JSON has no channels
			}
			return i
		})
		if err == nil || yielded >= n {
			t.Errorf("failing encoding, %d cores: %v after reading %d of %d", procs, err, yielded, n)
		}
	}
}
