package faults

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// herdBinary is the product binary, built once for the run without the
// race detector.
var herdBinary string

// reportEnv names the file the suite's JSON report is written to.
const reportEnv = "HERD_FAULTS_REPORT"

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	dir, err := os.MkdirTemp("", "herd-faults-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	herdBinary = filepath.Join(dir, "herd")
	build := exec.Command("go", "build", "-o", herdBinary, "..")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build herd: %v\n%s", err, out)
		return 1
	}
	start := time.Now()
	code := m.Run()
	suite.Seconds = time.Since(start).Seconds()
	if code == 0 {
		// Every goroutine ends with its scenario (see doc.go); keep-alive
		// connections of the readiness probes are the only ones left.
		http.DefaultClient.CloseIdleConnections()
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			code = 1
		}
	}
	if path := os.Getenv(reportEnv); path != "" {
		if err := suite.write(path); err != nil {
			fmt.Fprintln(os.Stderr, "write the fault report:", err)
			return 1
		}
	}
	return code
}

// suite is the run's report; every scenario adds its entry when it ends.
var suite report

// report is the JSON written to HERD_FAULTS_REPORT.
type report struct {
	mu sync.Mutex // guards Scenarios
	// Seconds is the whole run's wall time, the herd build excluded.
	Seconds   float64     `json:"seconds"`
	Scenarios []*scenario `json:"scenarios"`
}

// scenario is one test's counts.
type scenario struct {
	Name    string  `json:"name"`
	Passed  bool    `json:"passed"`
	Skipped bool    `json:"skipped,omitempty"`
	Seconds float64 `json:"seconds"`
	// Counts are the scenario's figures; Expect says, for the ones the
	// test asserts, what they must be ("0", "8", ">=1").
	Counts map[string]int    `json:"counts"`
	Expect map[string]string `json:"expect"`
	// Millis are durations the scenario measured.
	Millis map[string]float64 `json:"millis,omitempty"`

	t     *testing.T
	mu    sync.Mutex // guards the maps
	start time.Time
	order []string
}

// record starts the scenario of t; when t ends its counts are checked
// against their expectations, logged and added to the report.
func record(t *testing.T) *scenario {
	s := &scenario{
		Name: t.Name(), Counts: map[string]int{}, Expect: map[string]string{}, Millis: map[string]float64{},
		t: t, start: time.Now(),
	}
	t.Cleanup(s.finish)
	return s
}

// add adds n to a count that is only reported.
func (s *scenario) add(name string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.Counts[name]; !ok {
		s.order = append(s.order, name)
	}
	s.Counts[name] += n
}

// want declares what a count must be when the scenario ends: "0", a
// number, or ">=N".
func (s *scenario) want(name, expect string) {
	s.add(name, 0)
	s.mu.Lock()
	s.Expect[name] = expect
	s.mu.Unlock()
}

// millis records a duration.
func (s *scenario) millis(name string, d time.Duration) {
	s.mu.Lock()
	s.Millis[name] = float64(d.Microseconds()) / 1000
	s.mu.Unlock()
}

// meets reports whether got satisfies expect.
func meets(got int, expect string) bool {
	if rest, ok := strings.CutPrefix(expect, ">="); ok {
		var min int
		fmt.Sscan(rest, &min)
		return got >= min
	}
	return fmt.Sprint(got) == expect
}

func (s *scenario) finish() {
	s.Passed, s.Skipped = !s.t.Failed(), s.t.Skipped()
	s.mu.Lock()
	s.Seconds = time.Since(s.start).Seconds()
	var b strings.Builder
	fmt.Fprintf(&b, "%s in %.1f s:", s.Name, s.Seconds)
	for _, name := range s.order {
		got := s.Counts[name]
		expect, checked := s.Expect[name]
		fmt.Fprintf(&b, " %s=%d", name, got)
		if checked && !s.Skipped && !meets(got, expect) {
			fmt.Fprintf(&b, " (want %s)", expect)
			s.t.Errorf("%s = %d, want %s", name, got, expect)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Millis)) {
		fmt.Fprintf(&b, " %s=%.0fms", name, s.Millis[name])
	}
	s.mu.Unlock()
	s.Passed = !s.t.Failed()
	s.t.Log(b.String())
	suite.mu.Lock()
	suite.Scenarios = append(suite.Scenarios, s)
	suite.mu.Unlock()
}

// write saves the report as indented JSON.
func (r *report) write(path string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
