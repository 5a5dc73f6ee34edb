package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestCommittedIconsAreUpToDate regenerates every icon and compares it with
// the committed file; run `go generate ./web` after changing the drawing.
func TestCommittedIconsAreUpToDate(t *testing.T) {
	for _, ic := range icons {
		want, err := encode(ic)
		if err != nil {
			t.Fatalf("%s: %v", ic.name, err)
		}
		got, err := os.ReadFile(filepath.Join("..", "..", "static", ic.name))
		if err != nil {
			t.Fatalf("%s: %v", ic.name, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the generator's output; run go generate ./web", ic.name)
		}
	}
}

func TestMaskableMarkStaysInsideTheSafeZone(t *testing.T) {
	// Every non-background pixel of the maskable icon must lie within the
	// centred circle of diameter 0.8 that platforms never crop.
	img := draw(icon{size: 128, maskable: true})
	bg := img.NRGBAAt(0, 0)
	for y := range 128 {
		for x := range 128 {
			dx, dy := (float64(x)+0.5)/128-0.5, (float64(y)+0.5)/128-0.5
			if img.NRGBAAt(x, y) != bg && dx*dx+dy*dy > 0.4*0.4 {
				t.Fatalf("pixel (%d,%d) of the mark is outside the safe zone", x, y)
			}
		}
	}
}
