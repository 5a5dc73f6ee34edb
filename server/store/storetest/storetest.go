// Package storetest gives tests of the store and of the packages built on
// it a throwaway PostgreSQL database each, on the server named by
// HERD_TEST_POSTGRES_URL. It does not import the store, so the store's own
// tests can use it too.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver for the admin connection
)

// PostgresURLEnv names the variable holding the URL of a PostgreSQL server
// the tests may create databases on.
const PostgresURLEnv = "HERD_TEST_POSTGRES_URL"

// admin is the shared connection to the server named by PostgresURLEnv.
var admin struct {
	once sync.Once
	db   *sql.DB
	url  *url.URL
	err  error
}

// PostgresDatabase creates a fresh database, drops it when tb ends and
// returns its URL. Without a reachable server it fails the test on CI,
// where the PostgreSQL suite must run, and skips it elsewhere.
func PostgresDatabase(tb testing.TB) string {
	tb.Helper()
	raw := os.Getenv(PostgresURLEnv)
	if raw == "" {
		unavailable(tb, PostgresURLEnv+" is not set")
	}
	admin.once.Do(func() {
		if admin.url, admin.err = url.Parse(raw); admin.err != nil {
			return
		}
		if admin.db, admin.err = sql.Open("pgx", raw); admin.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		admin.err = admin.db.PingContext(ctx)
	})
	if admin.err != nil {
		unavailable(tb, fmt.Sprintf("the server at %s is unreachable: %v", PostgresURLEnv, admin.err))
	}
	// Lower case: PostgreSQL folds the unquoted name in CREATE DATABASE,
	// and the URL must name the database as it was created.
	name := "herd_test_" + strings.ToLower(rand.Text())
	if _, err := admin.db.Exec("CREATE DATABASE " + name); err != nil {
		tb.Fatalf("create database %s: %v", name, err)
	}
	tb.Cleanup(func() {
		if _, err := admin.db.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
			tb.Errorf("drop database %s: %v", name, err)
		}
	})
	u := *admin.url
	u.Path = "/" + name
	return u.String()
}

// Close closes the admin connection; TestMain calls it after the tests.
func Close() {
	if admin.db != nil {
		admin.db.Close()
	}
}

// unavailable fails the test on CI and skips it elsewhere, with
// instructions.
func unavailable(tb testing.TB, why string) {
	tb.Helper()
	const how = "start a server (source .ci/postgres.sh && pg_start) and set " + PostgresURLEnv
	if os.Getenv("CI") == "true" {
		tb.Fatalf("PostgreSQL tests cannot run: %s; CI must run them: %s", why, how)
	}
	tb.Skipf("skipping PostgreSQL tests: %s; to run them, %s", why, how)
}
