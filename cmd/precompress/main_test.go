package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunWritesCopiesThatDecompressToTheInput(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.wasm")
	raw := bytes.Repeat([]byte("herd wasm bytes "), 4096)
	require.NoError(t, os.WriteFile(path, raw, 0o644))

	var out strings.Builder
	require.NoError(t, run(path, &out))

	for suffix, open := range map[string]func(io.Reader) (io.Reader, error){
		".gz": func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) },
		".br": func(r io.Reader) (io.Reader, error) { return brotli.NewReader(r), nil },
	} {
		f, err := os.Open(path + suffix)
		require.NoError(t, err, suffix)
		dec, err := open(f)
		require.NoError(t, err, suffix)
		got, err := io.ReadAll(dec)
		require.NoError(t, f.Close())
		require.NoError(t, err, suffix)
		assert.Equal(t, raw, got, suffix)
	}
	assert.Contains(t, out.String(), "app.wasm.gz")
	assert.Contains(t, out.String(), "app.wasm.br")

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 3, "no temporary file is left behind")
}
