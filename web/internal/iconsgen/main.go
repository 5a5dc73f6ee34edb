// Command iconsgen draws herd's app icons: the herd mark (three heads side
// by side, the middle one taller, above a ground bar) in white on the brand
// teal. It writes icon-192.png and icon-512.png (a rounded tile with
// transparent corners) and icon-maskable-512.png (full bleed, the mark kept
// inside the central safe zone that platforms never crop). static/icon.svg
// is the hand-written vector twin of the same geometry.
//
// Run it through go generate in web/; the output is deterministic, and a
// test fails when the committed icons differ from it.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
)

func main() {
	dir := flag.String("dir", "static", "directory to write the icons into")
	flag.Parse()
	if err := writeAll(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "iconsgen:", err)
		os.Exit(1)
	}
}

// writeAll writes every icon into dir.
func writeAll(dir string) error {
	for _, ic := range icons {
		data, err := encode(ic)
		if err != nil {
			return fmt.Errorf("%s: %w", ic.name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, ic.name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// icon is one file to generate.
type icon struct {
	name string
	size int
	// maskable icons fill the whole square and shrink the mark into the
	// safe zone; the others are a rounded tile.
	maskable bool
}

// icons lists the generated files.
var icons = []icon{
	{name: "icon-192.png", size: 192},
	{name: "icon-512.png", size: 512},
	{name: "icon-maskable-512.png", size: 512, maskable: true},
}

// Colours of the mark; the teal is the theme colour of the web app.
var (
	teal  = color.NRGBA{R: 0x0f, G: 0x76, B: 0x6e, A: 0xff}
	white = color.NRGBA{R: 0xff, G: 0xff, B: 0xff, A: 0xff}
	mint  = color.NRGBA{R: 0x99, G: 0xf6, B: 0xe4, A: 0xff}
)

// Geometry in unit coordinates (the icon is the square [0,1]²), shared with
// icon.svg (which uses a 512 unit viewBox).
const (
	tileRadius = 0.22 // corner radius of the rounded tile
	// maskScale shrinks the mark for the maskable icon so that it fits the
	// safe zone, a centred circle of diameter 0.8.
	maskScale = 0.78
)

// disc is a filled circle.
type disc struct{ x, y, r float64 }

// heads are the three members of the herd.
var heads = []disc{
	{x: 0.27, y: 0.52, r: 0.09},
	{x: 0.50, y: 0.46, r: 0.115},
	{x: 0.73, y: 0.52, r: 0.09},
}

// ground is the bar the herd stands on, a stadium shape.
var ground = struct{ x0, x1, y, h float64 }{x0: 0.18, x1: 0.82, y: 0.71, h: 0.07}

// samples is the supersampling grid per pixel axis (samples² per pixel).
const samples = 4

// encode draws ic and returns its PNG bytes.
func encode(ic icon) ([]byte, error) {
	var buf bytes.Buffer
	err := png.Encode(&buf, draw(ic))
	return buf.Bytes(), err
}

// draw renders ic with supersampled anti-aliasing.
func draw(ic icon) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, ic.size, ic.size))
	n := float64(ic.size)
	for py := range ic.size {
		for px := range ic.size {
			var r, g, b, a float64
			for sy := range samples {
				for sx := range samples {
					x := (float64(px) + (float64(sx)+0.5)/samples) / n
					y := (float64(py) + (float64(sy)+0.5)/samples) / n
					c := shade(ic.maskable, x, y)
					alpha := float64(c.A) / 255
					r += float64(c.R) * alpha
					g += float64(c.G) * alpha
					b += float64(c.B) * alpha
					a += alpha
				}
			}
			img.SetNRGBA(px, py, average(r, g, b, a))
		}
	}
	return img
}

// average turns summed premultiplied samples into one straight-alpha pixel.
func average(r, g, b, a float64) color.NRGBA {
	if a == 0 {
		return color.NRGBA{}
	}
	return color.NRGBA{
		R: uint8(math.Round(r / a)),
		G: uint8(math.Round(g / a)),
		B: uint8(math.Round(b / a)),
		A: uint8(math.Round(a / (samples * samples) * 255)),
	}
}

// shade returns the colour at unit point (x, y).
func shade(maskable bool, x, y float64) color.NRGBA {
	if !maskable && !inRoundedSquare(x, y, tileRadius) {
		return color.NRGBA{}
	}
	if maskable {
		x = 0.5 + (x-0.5)/maskScale
		y = 0.5 + (y-0.5)/maskScale
	}
	for _, d := range heads {
		if math.Hypot(x-d.x, y-d.y) <= d.r {
			return white
		}
	}
	if inStadium(x, y) {
		return mint
	}
	return teal
}

// inRoundedSquare reports whether (x, y) lies in the unit square with
// corners rounded by radius rad.
func inRoundedSquare(x, y, rad float64) bool {
	cx := math.Max(rad, math.Min(1-rad, x))
	cy := math.Max(rad, math.Min(1-rad, y))
	return math.Hypot(x-cx, y-cy) <= rad
}

// inStadium reports whether (x, y) lies in the ground bar.
func inStadium(x, y float64) bool {
	half := ground.h / 2
	cx := math.Max(ground.x0+half, math.Min(ground.x1-half, x))
	return math.Hypot(x-cx, y-ground.y) <= half
}
