package gitwatch

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"
)

const (
	// binarySniffLen is how much of a file git reads to decide that it is
	// binary: it is when those bytes hold a NUL.
	binarySniffLen = 8000
	// maxCountedBytes bounds what is read of one untracked file; lines
	// beyond it are not counted.
	maxCountedBytes = 16 << 20
)

// lineCounter counts the lines of untracked files as git diff --numstat
// would count their additions, with one buffer for all of them.
type lineCounter struct {
	buf []byte
}

func newLineCounter() *lineCounter {
	return &lineCounter{buf: make([]byte, 32<<10)}
}

// count returns the number of lines of the file at path, reading at most
// maxCountedBytes of it: its newlines, plus one for a last line without
// one. A binary file, a directory (a nested repository) or a file that
// cannot be read has none; a symbolic link has one, its target, as git
// stores it. It reports false if the file no longer exists.
func (c *lineCounter) count(path string) (lines int, exists bool) {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return 0, false
	case err != nil:
		return 0, true
	case fi.Mode()&fs.ModeSymlink != 0:
		return 1, true
	case !fi.Mode().IsRegular():
		return 0, true
	}
	// O_NONBLOCK and O_NOFOLLOW: if the file was replaced by a FIFO or a
	// link since Lstat, opening it must neither block nor follow it.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return 0, !errors.Is(err, fs.ErrNotExist)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return 0, true
	}
	r := io.LimitReader(f, maxCountedBytes)
	read, last := 0, byte('\n')
	for {
		n, err := r.Read(c.buf)
		chunk := c.buf[:n]
		if read < binarySniffLen && bytes.IndexByte(chunk[:min(n, binarySniffLen-read)], 0) >= 0 {
			return 0, true
		}
		if n > 0 {
			lines += bytes.Count(chunk, []byte{'\n'})
			read += n
			last = chunk[n-1]
		}
		if err != nil {
			break
		}
	}
	if last != '\n' {
		lines++
	}
	return lines, true
}
