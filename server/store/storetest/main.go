package storetest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// Main runs a package's tests, then closes the admin connection and,
// when they passed, checks that no goroutine leaked apart from the SQL
// drivers' own helpers. TestMain exits with its result:
// os.Exit(storetest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	Close()
	if code != 0 {
		return code
	}
	err := goleak.Find(
		goleak.IgnoreTopFunction("database/sql.(*DB).connectionOpener"),
		goleak.IgnoreAnyFunction("github.com/jackc/pgx/v5/pgxpool.(*Pool).backgroundHealthCheck"),
	)
	if err != nil {
		fmt.Fprintln(os.Stderr, "goroutine leak:", err)
		return 1
	}
	return 0
}

// Database is a fresh, empty database for one test.
type Database struct {
	// URL is the PostgreSQL database's URL; empty for SQLite.
	URL string
	// DataDir holds the SQLite database (herd.db); empty for PostgreSQL.
	DataDir string
	// Driver and DSN open a raw database/sql connection to it, with the
	// "sqlite3" or "pgx" driver the caller links in.
	Driver, DSN string
}

// NewDatabase makes a fresh database of dialect ("sqlite" or "postgres"),
// removed when tb ends; PostgreSQL needs PostgresURLEnv (see
// PostgresDatabase).
func NewDatabase(tb testing.TB, dialect string) Database {
	tb.Helper()
	switch dialect {
	case "sqlite":
		dir := tb.TempDir()
		return Database{DataDir: dir, Driver: "sqlite3", DSN: filepath.Join(dir, "herd.db") + "?_foreign_keys=on&_busy_timeout=5000"}
	case "postgres":
		u := PostgresDatabase(tb)
		return Database{URL: u, Driver: "pgx", DSN: u}
	}
	tb.Fatalf("unknown dialect %q", dialect)
	return Database{}
}
