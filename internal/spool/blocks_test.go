package spool

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// TestBlocks: blocks read back as written, whole or in part, from a file
// that leaves nothing behind; a read outside a block is an error.
func TestBlocks(t *testing.T) {
	dir := t.TempDir()
	s := &Blocks{Dir: dir}
	var written [][]byte
	for i := range 5 {
		b := bytes.Repeat([]byte{byte('a' + i)}, 1000*(i+1))
		n, err := s.Write(b)
		if err != nil || n != i {
			t.Fatalf("Write = %d, %v; want %d", n, err, i)
		}
		written = append(written, b)
	}
	for i, b := range written {
		got := make([]byte, len(b))
		if err := s.ReadAt(i, got, 0); err != nil || !bytes.Equal(got, b) {
			t.Errorf("block %d: %v, %d bytes equal", i, err, len(got))
		}
		part := make([]byte, 10)
		if err := s.ReadAt(i, part, len(b)-10); err != nil || !bytes.Equal(part, b[len(b)-10:]) {
			t.Errorf("the end of block %d: %v, %q", i, err, part)
		}
		if err := s.ReadAt(i, part, len(b)-9); err == nil {
			t.Errorf("a read past the end of block %d is no error", i)
		}
	}
	if err := s.ReadAt(5, nil, 0); err == nil {
		t.Error("a read of a block never written is no error")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestBlocksKeepWorkloads: rules.Workloads spilled to Blocks reads back the
// summaries it was given; with nowhere to write, they stay in memory.
func TestBlocksKeepWorkloads(t *testing.T) {
	var in []*rules.Workload
	for i := range 20000 {
		in = append(in, &rules.Workload{
			Ref:    object.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: fmt.Sprint("web-", i)},
			Source: object.Source{File: fmt.Sprint(i%7, ".yaml"), Line: i}, Namespace: "shop", Labels: map[string]string{"app": fmt.Sprint(i)},
			Placement: fargate.Placement{Fargate: true, Profile: "apps"}, Replicas: 3,
		})
	}
	want := slices.Clone(in)
	slices.SortStableFunc(want, func(a, b *rules.Workload) int {
		if a.Source.File != b.Source.File {
			return strings.Compare(a.Source.File, b.Source.File)
		}
		return a.Source.Line - b.Source.Line
	})
	for _, dir := range []string{t.TempDir(), filepath.Join(t.TempDir(), "missing")} {
		blocks := &Blocks{Dir: dir}
		s := &rules.Workloads{Spill: blocks}
		for _, w := range in {
			s.Add(w)
		}
		if diff := cmp.Diff(want, slices.Collect(s.Sorted())); diff != "" || s.Err() != nil {
			t.Errorf("in %s: %v (-want +got):\n%s", dir, s.Err(), diff)
		}
		if len(blocks.blocks) == 0 != (filepath.Base(dir) == "missing") {
			t.Errorf("in %s: %d blocks written", dir, len(blocks.blocks))
		}
		if err := blocks.Close(); err != nil {
			t.Error(err)
		}
	}
}
