// Package dbtest opens a Store on a throwaway database, SQLite or
// PostgreSQL, for the tests of packages built on the store. (The store's
// own tests use storetest, which does not import the store.)
package dbtest

import (
	"context"
	"database/sql"
	"testing"

	// Drivers of the raw connection, which tests use to set what no store
	// function writes.
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "github.com/mattn/go-sqlite3"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/server/store/storetest"
	"github.com/herd-dev/herd/shared"
)

// Dialects are the databases store-backed tests run on.
var Dialects = []string{"sqlite", "postgres"}

// DB is a Store on a fresh database, a raw connection to that database
// and a workspace in it.
type DB struct {
	*store.Store
	Raw       *sql.DB
	Workspace shared.Workspace
}

// Open opens a DB on a fresh database of dialect, closed and removed when
// tb ends. PostgreSQL needs storetest.PostgresURLEnv: without it the test
// is skipped, or fails when CI is "true".
func Open(tb testing.TB, dialect string) *DB {
	tb.Helper()
	ctx := context.Background()
	db := storetest.NewDatabase(tb, dialect)
	st, err := store.Open(ctx, store.Config{URL: db.URL, DataDir: db.DataDir})
	require.NoError(tb, err)
	raw, err := sql.Open(db.Driver, db.DSN)
	require.NoError(tb, err)
	// Cleanups run last first: the raw connection closes before the store,
	// and both before the database is dropped.
	tb.Cleanup(func() { require.NoError(tb, st.Close()) })
	tb.Cleanup(func() { require.NoError(tb, raw.Close()) })
	ws, err := st.CreateWorkspace(ctx, "w")
	require.NoError(tb, err)
	return &DB{Store: st, Raw: raw, Workspace: ws}
}
