package store

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// domainTables are the tables of the first migration.
var domainTables = []string{
	"workspaces", "tasks", "task_repositories", "agent_profiles", "sessions", "messages",
	"queued_prompts", "git_observations", "pull_requests", "github_deliveries", "task_status_summaries",
}

func TestOpenAppliesMigrationsAndReopeningIsANoOp(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		cfg := MustConfig(t, dialect)
		s := mustOpenConfig(t, cfg)
		if got := s.Dialect(); got != dialect {
			t.Fatalf("Dialect() = %q, want %q", got, dialect)
		}
		for _, table := range domainTables {
			if !s.write.Migrator().HasTable(table) {
				t.Errorf("table %s missing after Open", table)
			}
		}
		applied := countAppliedMigrations(t, s)

		again := mustOpenConfig(t, cfg)
		if err := again.Ping(ctx); err != nil {
			t.Fatalf("ping reopened store: %v", err)
		}
		if got := countAppliedMigrations(t, again); got != applied {
			t.Fatalf("reopening recorded %d migrations, want %d as before", got, applied)
		}
		w := again.pools[0]
		p, err := newProvider(w, dialect)
		if err != nil {
			t.Fatal(err)
		}
		current, newest, err := p.GetVersions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if current != newest {
			t.Fatalf("schema version %d, want the newest migration %d", current, newest)
		}
	})
}

// countAppliedMigrations counts goose's records of applied migrations.
func countAppliedMigrations(t *testing.T, s *Store) int64 {
	t.Helper()
	var n int64
	if err := s.read.Table("goose_db_version").Where("is_applied = ?", true).Count(&n).Error; err != nil {
		t.Fatalf("count migrations: %v", err)
	}
	return n
}

func TestOpenRefusesASchemaNewerThanThisBuild(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		cfg := MustConfig(t, dialect)
		s := mustOpenConfig(t, cfg)
		err := s.write.Exec("INSERT INTO goose_db_version (version_id, is_applied) VALUES (?, ?)", 99999, true).Error
		if err != nil {
			t.Fatalf("record a future migration: %v", err)
		}

		again, err := Open(context.Background(), cfg)
		if err == nil {
			again.Close()
			t.Fatal("Open accepted a database migrated past this build")
		}
		if !strings.Contains(err.Error(), "schema version 99999 is newer") {
			t.Fatalf("Open error %q does not explain the newer schema", err)
		}
	})
}

func TestMigrationsRollBackAndReapply(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		p, err := newProvider(s.pools[0], dialect)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.DownTo(ctx, 0); err != nil {
			t.Fatalf("roll back every migration: %v", err)
		}
		for _, table := range domainTables {
			if s.write.Migrator().HasTable(table) {
				t.Errorf("table %s left after rolling back", table)
			}
		}
		if _, err := p.Up(ctx); err != nil {
			t.Fatalf("reapply migrations: %v", err)
		}
		mustWorkspace(t, s, "after reapply")
	})
}

func TestSQLiteRunsWithForeignKeysAndWAL(t *testing.T) {
	s := MustOpen(t, dialectSQLite)
	for i, db := range s.pools {
		var fk int
		var mode string
		if err := db.QueryRow("PRAGMA foreign_keys").Scan(&fk); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if fk != 1 || mode != "wal" {
			t.Errorf("pool %d: foreign_keys=%d journal_mode=%s, want 1 and wal", i, fk, mode)
		}
	}
	if got := s.pools[0].Stats().MaxOpenConnections; got != 1 {
		t.Errorf("SQLite writer pool allows %d connections, want 1", got)
	}
}

func TestForeignKeysAreEnforced(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := MustOpen(t, dialect)
		err := s.write.Exec(
			"INSERT INTO task_repositories (id, task_id, path, position, created_at) VALUES (?, ?, ?, ?, ?)",
			NewID(), "no-such-task", "/src", 0, now()).Error
		if !isForeignKeyViolation(err) {
			t.Fatalf("inserting a repository of a missing task: got %v, want a foreign key violation", err)
		}
	})
}

func TestBothDialectsHaveTheSameColumns(t *testing.T) {
	lite := columnsOf(t, MustOpen(t, dialectSQLite))
	pg := columnsOf(t, MustOpen(t, dialectPostgres))
	if !reflect.DeepEqual(lite, pg) {
		t.Fatalf("schemas differ:\nsqlite:   %v\npostgres: %v", lite, pg)
	}
	for _, table := range domainTables {
		if len(lite[table]) == 0 {
			t.Errorf("table %s has no columns", table)
		}
	}
}

// columnsOf maps every table of herd's schema in s to its columns, each as
// "name" or "name NOT NULL", in definition order. Tables of goose and of
// SQLite itself are left out.
func columnsOf(t *testing.T, s *Store) map[string][]string {
	t.Helper()
	var query string
	switch s.Dialect() {
	case dialectSQLite:
		query = `SELECT m.name, c.name, c."notnull" OR c.pk
			FROM sqlite_master m JOIN pragma_table_info(m.name) c
			WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite%' AND m.name <> 'goose_db_version'
			ORDER BY m.name, c.cid`
	case dialectPostgres:
		query = `SELECT table_name, column_name, is_nullable = 'NO'
			FROM information_schema.columns
			WHERE table_schema = current_schema() AND table_name <> 'goose_db_version'
			ORDER BY table_name, ordinal_position`
	}
	rows, err := s.pools[0].Query(query)
	if err != nil {
		t.Fatalf("read schema: %v", err)
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var table, column string
		var notNull bool
		if err := rows.Scan(&table, &column, &notNull); err != nil {
			t.Fatal(err)
		}
		if notNull {
			column += " NOT NULL"
		}
		out[table] = append(out[table], column)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestOpenCreatesTheDataDirForTheDefaultDatabase(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nested", "data")
	s := mustOpenConfig(t, Config{DataDir: dir})
	if s.Dialect() != dialectSQLite {
		t.Fatalf("default dialect %q, want sqlite", s.Dialect())
	}
	info, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o700 {
		t.Errorf("data dir mode %o, want 700", perm)
	}
	if _, err := os.Stat(filepath.Join(dir, "herd.db")); err != nil {
		t.Errorf("herd.db not created: %v", err)
	}
}

func TestOpenSQLiteByURL(t *testing.T) {
	dir := t.TempDir()
	for name, url := range map[string]string{
		"sqlite scheme":       "sqlite://" + filepath.Join(dir, "a.db"),
		"file URI":            "file:" + filepath.Join(dir, "b.db"),
		"file URI with query": "file:" + filepath.Join(dir, "c.db") + "?cache=private",
	} {
		t.Run(name, func(t *testing.T) {
			s := mustOpenConfig(t, Config{URL: url})
			mustWorkspace(t, s, "by url")
		})
	}
}

func TestResolveConfig(t *testing.T) {
	tests := []struct {
		name        string
		cfg         Config
		wantDialect string
		wantDSN     string
		wantErr     string
	}{
		{"default file", Config{DataDir: "/data"}, dialectSQLite, "/data/herd.db?" + sqliteParams + "&_busy_timeout=5000", ""},
		{"postgres", Config{URL: "postgres://u@h/db"}, dialectPostgres, "postgres://u@h/db", ""},
		{"postgresql", Config{URL: "postgresql://u@h/db"}, dialectPostgres, "postgresql://u@h/db", ""},
		{"sqlite scheme", Config{URL: "sqlite:///var/herd.db"}, dialectSQLite, "/var/herd.db?" + sqliteParams + "&_busy_timeout=5000", ""},
		{"file", Config{URL: "file:/var/herd.db"}, dialectSQLite, "file:/var/herd.db?" + sqliteParams + "&_busy_timeout=5000", ""},
		{"file with query", Config{URL: "file:/var/herd.db?cache=private"}, dialectSQLite, "file:/var/herd.db?cache=private&" + sqliteParams + "&_busy_timeout=5000", ""},
		{"no data dir", Config{}, "", "", "data dir is required"},
		{"empty sqlite path", Config{URL: "sqlite://"}, "", "", "file path"},
		{"unknown scheme", Config{URL: "mysql://root:hunter2@db/herd"}, "", "", `unsupported URL scheme "mysql"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dialect, dsn, err := resolve(tt.cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Fatalf("error %q reveals the password", err)
				}
				return
			}
			if err != nil || dialect != tt.wantDialect || dsn != tt.wantDSN {
				t.Fatalf("resolve = %q, %q, %v; want %q, %q", dialect, dsn, err, tt.wantDialect, tt.wantDSN)
			}
		})
	}
}
