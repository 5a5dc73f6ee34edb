// Command precompress writes the pre-compressed copies of a build output
// that the server sends instead of compressing per request:
//
//	go run ./cmd/precompress web/static/app.wasm
//
// writes web/static/app.wasm.gz (gzip, best compression) and
// web/static/app.wasm.br (brotli, quality 11) next to the input and prints
// the three sizes. Each copy is written to a temporary file and renamed, so
// a server never embeds a half-written copy.
package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/andybalholm/brotli"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: precompress FILE")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "precompress:", err)
		os.Exit(1)
	}
}

// run compresses path both ways and reports the sizes to out.
func run(path string, out io.Writer) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	gz, err := compress(raw, func(w io.Writer) (io.WriteCloser, error) {
		return gzip.NewWriterLevel(w, gzip.BestCompression)
	})
	if err != nil {
		return fmt.Errorf("gzip: %w", err)
	}
	br, err := compress(raw, func(w io.Writer) (io.WriteCloser, error) {
		return brotli.NewWriterOptions(w, brotli.WriterOptions{Quality: brotli.BestCompression, LGWin: 24}), nil
	})
	if err != nil {
		return fmt.Errorf("brotli: %w", err)
	}
	for _, f := range []struct {
		suffix string
		data   []byte
	}{{".gz", gz}, {".br", br}} {
		if err := writeAtomic(path+f.suffix, f.data); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "%-28s %10d bytes\n", filepath.Base(path), len(raw))
	fmt.Fprintf(out, "%-28s %10d bytes (%.1f%%)\n", filepath.Base(path)+".gz", len(gz), percent(len(gz), len(raw)))
	fmt.Fprintf(out, "%-28s %10d bytes (%.1f%%)\n", filepath.Base(path)+".br", len(br), percent(len(br), len(raw)))
	return nil
}

// compress runs data through the writer newWriter makes.
func compress(data []byte, newWriter func(io.Writer) (io.WriteCloser, error)) ([]byte, error) {
	var buf bytes.Buffer
	w, err := newWriter(&buf)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(data); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeAtomic replaces path with data through a temporary file in the same
// directory.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// percent is part as a percentage of whole.
func percent(part, whole int) float64 {
	if whole == 0 {
		return 0
	}
	return 100 * float64(part) / float64(whole)
}
