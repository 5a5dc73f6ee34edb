package web

import (
	"image/png"
	"io/fs"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStaticHoldsTheCommittedAssets(t *testing.T) {
	for _, name := range []string{"app.css", "push.js", "icon.svg", "icon-192.png", "icon-512.png", "icon-maskable-512.png"} {
		info, err := fs.Stat(Static, name)
		require.NoError(t, err, "Static must be rooted at web/static/ and hold %s", name)
		assert.Positive(t, info.Size(), name)
	}
}

func TestIconsHaveTheirDeclaredSizes(t *testing.T) {
	for name, size := range map[string]int{"icon-192.png": 192, "icon-512.png": 512, "icon-maskable-512.png": 512} {
		f, err := Static.Open(name)
		require.NoError(t, err)
		cfg, err := png.DecodeConfig(f)
		require.NoError(t, f.Close())
		require.NoError(t, err, name)
		assert.Equal(t, size, cfg.Width, name)
		assert.Equal(t, size, cfg.Height, name)
	}
}

func TestStylesheetUsesNoRemoteResources(t *testing.T) {
	css, err := fs.ReadFile(Static, "app.css")
	require.NoError(t, err)
	for _, banned := range []string{"http://", "https://", "@import", "url("} {
		assert.NotContains(t, strings.ToLower(string(css)), banned)
	}
}
