package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The pins in the code are the ones the lockfile installs.
func TestAdapterPinsMatchTheLockfile(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("adapters", "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	var lock struct {
		Packages map[string]struct {
			Version string            `json:"version"`
			Bin     map[string]string `json:"bin"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(data, &lock); err != nil {
		t.Fatal(err)
	}
	for _, a := range []Adapter{ClaudeAdapter, CodexAdapter, GeminiAdapter} {
		pkg, ok := lock.Packages["node_modules/"+a.Package]
		if !ok || pkg.Version != a.Version {
			t.Errorf("%s: locked %q, pinned %q", a.Package, pkg.Version, a.Version)
		}
		if _, ok := pkg.Bin[a.Bin]; !ok {
			t.Errorf("%s installs no %q (bins %v)", a.Package, a.Bin, pkg.Bin)
		}
	}
}

func executable(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestAdapterProfileFindsTheInstalledAdapterThenPathThenNpx(t *testing.T) {
	bin := t.TempDir()
	executable(t, filepath.Join(bin, "node"))
	t.Setenv("PATH", bin)
	prefix := t.TempDir()
	installed := filepath.Join(prefix, "node_modules", ".bin", "gemini")
	executable(t, installed)

	p := GeminiAdapter.Profile("gemini", "Gemini CLI", "gemini", prefix)
	if p.Command != installed || strings.Join(p.Args, " ") != "--acp" || !p.Available() {
		t.Fatalf("installed: %+v (missing %q)", p, p.Missing())
	}

	executable(t, filepath.Join(bin, "gemini"))
	p = GeminiAdapter.Profile("gemini", "Gemini CLI", "gemini", t.TempDir())
	if p.Command != filepath.Join(bin, "gemini") || !p.Available() {
		t.Fatalf("on PATH: %+v", p)
	}

	p = ClaudeAdapter.Profile("claude-code", "Claude Code", "claude", "")
	if p.Command != "npx" || strings.Join(p.Args, " ") != "-y @agentclientprotocol/claude-agent-acp@0.101.0" {
		t.Fatalf("npx: %+v", p)
	}
	missing := p.Missing()
	if p.Available() || !strings.Contains(missing, "needs npx on PATH") || !strings.Contains(missing, "npm install -g @agentclientprotocol/claude-agent-acp@0.101.0") {
		t.Fatalf("without npx: available %v, missing %q", p.Available(), missing)
	}
	if w := p.Wire(); w.Available || w.Missing != missing {
		t.Fatalf("wire = %+v", w)
	}

	t.Setenv("PATH", t.TempDir())
	if m := ClaudeAdapter.Profile("claude-code", "Claude Code", "claude", prefix).Missing(); !strings.Contains(m, "needs npx and node on PATH") {
		t.Fatalf("without node: %q", m)
	}
}
