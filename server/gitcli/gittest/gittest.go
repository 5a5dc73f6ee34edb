package gittest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Isolate sets, for the rest of the process, the environment that makes
// git ignore the system and global configuration and commit as a fixed
// test identity, with an empty temporary directory as HOME. The go
// command's settings, build cache and module cache stay where they were
// (see pinGo). It returns a function that removes that directory. Call it
// from TestMain, before m.Run.
func Isolate() (cleanup func(), err error) {
	if err := pinGo(); err != nil {
		return nil, err
	}
	home, err := os.MkdirTemp("", "herd-git-home-")
	if err != nil {
		return nil, err
	}
	for k, v := range map[string]string{
		"HOME":                home,
		"XDG_CONFIG_HOME":     filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM": "1",
		"GIT_CONFIG_GLOBAL":   filepath.Join(home, ".gitconfig"),
		"GIT_AUTHOR_NAME":     "herd test",
		"GIT_AUTHOR_EMAIL":    "test@herd.invalid",
		"GIT_COMMITTER_NAME":  "herd test",
		"GIT_COMMITTER_EMAIL": "test@herd.invalid",
	} {
		if err := os.Setenv(k, v); err != nil {
			os.RemoveAll(home)
			return nil, err
		}
	}
	return func() { os.RemoveAll(home) }, nil
}

// goLocations are the go command's files and caches that follow HOME
// unless set.
var goLocations = []string{"GOENV", "GOCACHE", "GOMODCACHE", "GOPATH"}

// pinGo sets goLocations to where they are now, so that a go command a
// test starts once HOME has moved (the server's tests build herd) keeps
// its settings and reuses the build and module caches instead of
// downloading every module and compiling everything again into HOME.
// Without a go command there is nothing to pin.
func pinGo() error {
	out, err := exec.Command("go", append([]string{"env"}, goLocations...)...).Output()
	switch {
	case errors.Is(err, exec.ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("go env: %w", err)
	}
	values := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(values) != len(goLocations) {
		return fmt.Errorf("go env %s: unexpected output %q", strings.Join(goLocations, " "), out)
	}
	for i, k := range goLocations {
		if err := os.Setenv(k, values[i]); err != nil {
			return err
		}
	}
	return nil
}

// Git runs git with args in dir and returns its standard output without
// the final newline, failing tb if git fails.
func Git(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("git %s in %s: %v: %s", strings.Join(args, " "), dir, err, stderr.Bytes())
	}
	return strings.TrimSuffix(string(out), "\n")
}

// Init creates a repository in a fresh temporary directory, on branch
// main, with one commit that adds README ("herd\n"), and returns its path.
func Init(tb testing.TB) string {
	tb.Helper()
	dir := InitEmpty(tb)
	Write(tb, dir, "README", "herd\n")
	Commit(tb, dir, "initial commit")
	return dir
}

// InitEmpty creates a repository without commits, on branch main, in a
// fresh temporary directory and returns its path.
func InitEmpty(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	Git(tb, dir, "init", "--quiet", "--initial-branch=main")
	return dir
}

// Write writes content to the file name, a slash-separated path relative
// to dir, creating its parent directories.
func Write(tb testing.TB, dir, name, content string) {
	tb.Helper()
	path := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// Commit stages every change in dir, untracked files included, and
// commits it with message.
func Commit(tb testing.TB, dir, message string) {
	tb.Helper()
	Git(tb, dir, "add", "--all")
	Git(tb, dir, "commit", "--quiet", "--allow-empty", "--message", message)
}

// SettleIndex makes every file of the working tree at dir older than its
// index, as they are once an agent has been at work for a while, so that
// git trusts the index's stat data instead of rereading files written in
// the same second as the index ("racily clean" ones).
func SettleIndex(tb testing.TB, dir string) {
	tb.Helper()
	old := time.Now().Add(-time.Hour)
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.Name() == ".git" && d.IsDir():
			return filepath.SkipDir
		case d.Name() == ".git":
			return nil
		}
		return os.Chtimes(path, old, old)
	})
	if err != nil {
		tb.Fatal(err)
	}
	Git(tb, dir, "update-index", "--refresh")
}
