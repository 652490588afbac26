package report

import (
	"bytes"
	"errors"
	"fmt"
	"iter"
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

// TestWriteArray: writeArray writes the elements in order, and the array's
// brackets as the whole report's Encoder would.
func TestWriteArray(t *testing.T) {
	for _, n := range []int{0, 1, 100} {
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
		var out bytes.Buffer
		yielded := 0
		if err := writeArray(&out, "xs", counted(n, &yielded), func(i int) int { return i }); err != nil {
			t.Fatalf("%d elements: %v", n, err)
		}
		if out.String() != want || yielded != n {
			t.Errorf("%d elements: %d read, wrote\n%s\nwant\n%s", n, yielded, out.String(), want)
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
// writeArray returns, and the reading stops there.
func TestWriteArrayErrors(t *testing.T) {
	const n = 1000
	yielded := 0
	err := writeArray(&failAfter{n: 3}, "xs", counted(n, &yielded), func(i int) int { return i })
	if !errors.Is(err, errWrite) || yielded >= n {
		t.Errorf("failing writer: %v after reading %d of %d", err, yielded, n)
	}
	yielded = 0
	err = writeArray(&bytes.Buffer{}, "xs", counted(n, &yielded), func(i int) any {
		if i == 10 {
			return make(chan int) // JSON has no channels
		}
		return i
	})
	if err == nil || yielded >= n {
		t.Errorf("failing encoding: %v after reading %d of %d", err, yielded, n)
	}
}
