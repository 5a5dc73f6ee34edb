package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3" // registers the "sqlite3" driver for LockSQLite
)

// Postgres is a PostgreSQL server of a test's own, which the test may stop
// and start again to see what a database outage does. It listens on
// loopback only, trusts every local connection and runs without fsync; it
// and its files are removed when the test ends.
type Postgres struct {
	tb   testing.TB
	bin  string
	dir  string
	port int
	// owner runs the server's commands as the postgres user when the test
	// runs as root (PostgreSQL refuses to run as root).
	owner []string

	mu      sync.Mutex // guards running
	running bool
}

// OwnPostgres initialises and starts a private PostgreSQL server (about
// three seconds). Without PostgreSQL's server binaries it fails the test on
// CI and skips it elsewhere.
func OwnPostgres(tb testing.TB) *Postgres {
	tb.Helper()
	bin, err := postgresBin()
	if err != nil {
		unavailable(tb, err.Error())
	}
	dir, err := os.MkdirTemp("", "herd-own-pg-")
	if err != nil {
		tb.Fatal(err)
	}
	p := &Postgres{tb: tb, bin: bin, dir: dir}
	tb.Cleanup(func() {
		p.Stop()
		os.RemoveAll(dir)
	})
	if os.Geteuid() == 0 {
		pg, err := user.Lookup("postgres")
		if err != nil {
			unavailable(tb, "running as root needs a postgres user to run the server as: "+err.Error())
		}
		uid, _ := strconv.Atoi(pg.Uid)
		gid, _ := strconv.Atoi(pg.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			tb.Fatal(err)
		}
		p.owner = []string{"runuser", "-u", "postgres", "--"}
	}
	if p.port, err = freePort(); err != nil {
		tb.Fatal(err)
	}
	p.run("initdb", "-D", p.data(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-locale")
	p.Start()
	return p
}

// URL returns the URL of a database named name on the server; "postgres"
// always exists, CreateDatabase makes others.
func (p *Postgres) URL(name string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", p.port, name)
}

// CreateDatabase creates a database and returns its URL.
func (p *Postgres) CreateDatabase(name string) string {
	p.tb.Helper()
	db, err := sql.Open("pgx", p.URL("postgres"))
	if err != nil {
		p.tb.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		p.tb.Fatalf("create database %s: %v", name, err)
	}
	return p.URL(name)
}

// Stop stops the server at once (pg_ctl's fast mode: connections are cut
// and new ones refused). It does nothing when the server is stopped.
func (p *Postgres) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.running {
		return
	}
	p.run("pg_ctl", "-D", p.data(), "-m", "fast", "-w", "stop")
	p.running = false
}

// Start starts the server again on the same port and waits until it takes
// connections. It does nothing when the server runs.
func (p *Postgres) Start() {
	p.tb.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running {
		return
	}
	opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c fsync=off -c max_connections=200", p.port, p.dir)
	p.run("pg_ctl", "-D", p.data(), "-l", filepath.Join(p.dir, "server.log"), "-w", "-o", opts, "start")
	p.running = true
}

func (p *Postgres) data() string { return filepath.Join(p.dir, "data") }

// run runs one of the server's commands as the server's owner, failing the
// test with its output when it fails.
func (p *Postgres) run(name string, args ...string) {
	p.tb.Helper()
	argv := append(append(append([]string{}, p.owner...), filepath.Join(p.bin, name)), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = p.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		p.tb.Fatalf("%s: %v\n%s", name, err, out)
	}
}

// postgresBin finds the newest installed PostgreSQL server binaries.
func postgresBin() (string, error) {
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(found, func(i, j int) bool { return versionOf(found[i]) < versionOf(found[j]) })
	if len(found) > 0 {
		return filepath.Dir(found[len(found)-1]), nil
	}
	if path, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(path), nil
	}
	return "", fmt.Errorf("no PostgreSQL server binaries (initdb) found; install postgresql")
}

// versionOf reads the major version from /usr/lib/postgresql/N/bin/initdb.
func versionOf(initdb string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return n
}

// freePort returns a loopback TCP port nothing listens on now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// LockSQLite takes the write lock of the SQLite database file at path from
// a connection of its own, as another process (a backup, a second herd)
// would, so that every write of the store on that file waits and then
// fails as unavailable. The returned function releases the lock; it is
// also released when the test ends.
func LockSQLite(tb testing.TB, path string) (release func()) {
	tb.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		tb.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := db.Conn(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		tb.Fatalf("lock %s: %v", path, err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
			conn.Close()
			db.Close()
		})
	}
	tb.Cleanup(release)
	return release
}
