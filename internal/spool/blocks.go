package spool

import (
	"fmt"
	"log/slog"
)

// Blocks keeps blocks of bytes in a temporary file: rules.Workloads gives
// it the buffers of workload summaries it has filled (rules.Spill), so that
// a check holds one buffer of them whatever the number of workloads. The
// zero value is ready to use; Close removes the file.
type Blocks struct {
	// Dir is where the temporary file goes; "" means os.TempDir.
	Dir string

	temp
	blocks []block
	end    int64
}

type block struct{ offset, size int64 }

// Write appends b to the file and returns its number. When it cannot, it
// logs a warning and returns the error: rules.Workloads then keeps its
// buffers in memory and stops writing.
func (s *Blocks) Write(b []byte) (int, error) {
	if err := s.create(s.Dir, "fargatekit-workloads-*"); err != nil {
		err = fmt.Errorf("keeping workload summaries on disk: %w", err)
		slog.Warn("the workload summaries stay in memory", "error", err)
		return 0, err
	}
	if _, err := s.file.WriteAt(b, s.end); err != nil {
		err = fmt.Errorf("keeping workload summaries in %s: %w", s.where(), err)
		slog.Warn("the workload summaries stay in memory", "error", err)
		return 0, err
	}
	s.blocks = append(s.blocks, block{s.end, int64(len(b))})
	s.end += int64(len(b))
	return len(s.blocks) - 1, nil
}

// ReadAt reads len(b) bytes of block i, from offset off in it.
func (s *Blocks) ReadAt(i int, b []byte, off int) error {
	if i < 0 || i >= len(s.blocks) || off < 0 || int64(off+len(b)) > s.blocks[i].size {
		return fmt.Errorf("no bytes %d to %d of block %d of the workload summaries in %s", off, off+len(b), i, s.where())
	}
	if _, err := s.file.ReadAt(b, s.blocks[i].offset+int64(off)); err != nil {
		return fmt.Errorf("reading the workload summaries in %s: %w", s.where(), err)
	}
	return nil
}

// Len returns how many blocks were written.
func (s *Blocks) Len() int { return len(s.blocks) }

// Close removes the file, if a block was written.
func (s *Blocks) Close() error {
	if err := s.close(); err != nil {
		return fmt.Errorf("removing the workload summaries kept on disk: %w", err)
	}
	return nil
}
