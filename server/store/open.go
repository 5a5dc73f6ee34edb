package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"

	"github.com/herd-dev/herd/migrations"
)

// Dialect names returned by Store.Dialect.
const (
	dialectSQLite   = "sqlite"
	dialectPostgres = "postgres"
)

// sqliteParams are appended to every SQLite DSN: enforce foreign keys, use
// the write-ahead log so readers never block the writer, wait for a lock
// held by another process up to the busy timeout (appended by
// sqliteOptions), and take the write lock when a transaction begins so that
// waiting happens in the busy handler instead of failing mid-transaction.
const sqliteParams = "_foreign_keys=on&_journal_mode=WAL&_txlock=immediate"

// defaultBusyTimeout is how long a SQLite statement waits for a lock
// another process holds before it fails as unavailable.
const defaultBusyTimeout = 5 * time.Second

// sqliteOptions returns the DSN parameters for cfg.
func sqliteOptions(cfg Config) string {
	busy := cfg.BusyTimeout
	if busy <= 0 {
		busy = defaultBusyTimeout
	}
	return sqliteParams + "&_busy_timeout=" + strconv.FormatInt(busy.Milliseconds(), 10)
}

// Connection pool sizes.
const (
	// postgresMaxConns bounds the connections one server holds; several
	// replicas may share one PostgreSQL.
	postgresMaxConns = 32
	// postgresIdleConns keeps enough warm connections for bursts of requests.
	postgresIdleConns = 8
	// postgresIdleTime closes connections a quiet server no longer needs.
	postgresIdleTime = 5 * time.Minute
	// minSQLiteReaders is the least number of SQLite read connections; WAL
	// lets them all read while the single writer writes.
	minSQLiteReaders = 4
)

// Config says which database to open.
type Config struct {
	// URL selects the database. Empty means the SQLite file herd.db in
	// DataDir; "postgres://…" or "postgresql://…" is a PostgreSQL connection
	// URL; "sqlite:///abs/path.db" or "file:…" is that SQLite file. An
	// in-memory SQLite database does not work: the store's reader and
	// writer connections must share one file.
	URL string
	// DataDir holds the default SQLite database. It is created (mode 0700)
	// when missing and SQLite is used.
	DataDir string
	// Logger receives migration progress and slow-query warnings; nil
	// discards them.
	Logger *slog.Logger
	// BusyTimeout is how long a SQLite statement waits for a lock another
	// process holds before failing as unavailable; zero means 5 s.
	BusyTimeout time.Duration
}

// Store is herd's persistence layer over SQLite or PostgreSQL. It is safe for
// concurrent use.
type Store struct {
	dialect string
	// read serves queries. On PostgreSQL it is the same handle as write.
	read *gorm.DB
	// write serves every statement that changes data. On SQLite it holds one
	// connection, so writers queue in Go instead of contending for the
	// database lock.
	write *gorm.DB
	// pools are the distinct connection pools behind read and write.
	pools []*sql.DB
	// appends group-commits AppendText calls.
	appends appendQueue
	// missingSummary is told of tasks read without a summary row (see
	// OnMissingSummary).
	missingSummary atomic.Pointer[func(taskID string)]
}

// Open opens the database cfg names, applies pending migrations and returns a
// ready Store. It refuses a database whose schema is newer than this build
// knows.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	dialect, dsn, err := resolve(cfg)
	if err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if dialect == dialectSQLite && cfg.DataDir != "" {
		if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
			return nil, fmt.Errorf("create data dir: %w", err)
		}
	}

	s := &Store{dialect: dialect}
	var writer *sql.DB
	switch dialect {
	case dialectPostgres:
		if s.write, writer, err = openGorm(ctx, postgres.Open(dsn), log); err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		writer.SetMaxOpenConns(postgresMaxConns)
		writer.SetMaxIdleConns(postgresIdleConns)
		writer.SetConnMaxIdleTime(postgresIdleTime)
		s.read = s.write
	case dialectSQLite:
		if s.write, writer, err = openGorm(ctx, sqlite.Open(dsn), log); err != nil {
			return nil, fmt.Errorf("open sqlite: %w", err)
		}
		writer.SetMaxOpenConns(1)
		writer.SetMaxIdleConns(1)
	}
	s.pools = append(s.pools, writer)

	if err := migrate(ctx, writer, dialect, log); err != nil {
		return nil, errors.Join(err, s.Close())
	}

	if dialect == dialectSQLite {
		// Readers open after migrating so that every read connection sees
		// the finished schema.
		var readers *sql.DB
		if s.read, readers, err = openGorm(ctx, sqlite.Open(dsn), log); err != nil {
			return nil, errors.Join(fmt.Errorf("open sqlite readers: %w", err), s.Close())
		}
		n := max(minSQLiteReaders, runtime.NumCPU())
		readers.SetMaxOpenConns(n)
		readers.SetMaxIdleConns(n)
		s.pools = append(s.pools, readers)
	}
	return s, nil
}

// resolve turns cfg into a dialect and a driver DSN. Errors never quote the
// URL, which may hold a password.
func resolve(cfg Config) (dialect, dsn string, err error) {
	u := cfg.URL
	switch {
	case u == "":
		if cfg.DataDir == "" {
			return "", "", errors.New("open database: a data dir is required for the default SQLite database")
		}
		return dialectSQLite, filepath.Join(cfg.DataDir, "herd.db") + "?" + sqliteOptions(cfg), nil
	case strings.HasPrefix(u, "postgres://"), strings.HasPrefix(u, "postgresql://"):
		return dialectPostgres, u, nil
	case strings.HasPrefix(u, "sqlite://"):
		path := strings.TrimPrefix(u, "sqlite://")
		if path == "" || strings.Contains(path, "?") {
			return "", "", errors.New(`open database: a sqlite:// URL must be followed by a file path without query, as in "sqlite:///var/lib/herd/herd.db"`)
		}
		return dialectSQLite, path + "?" + sqliteOptions(cfg), nil
	case strings.HasPrefix(u, "file:"):
		sep := "?"
		if strings.Contains(u, "?") {
			sep = "&"
		}
		return dialectSQLite, u + sep + sqliteOptions(cfg), nil
	}
	scheme, _, _ := strings.Cut(u, ":")
	return "", "", fmt.Errorf("open database: unsupported URL scheme %q: want postgres://, postgresql://, sqlite:// or file:", scheme)
}

// openGorm opens one connection pool and checks that it reaches the
// database, honouring ctx.
func openGorm(ctx context.Context, d gorm.Dialector, log *slog.Logger) (*gorm.DB, *sql.DB, error) {
	wrapped, err := newClassifying(d)
	if err != nil {
		return nil, nil, err
	}
	db, err := gorm.Open(wrapped, &gorm.Config{
		SkipDefaultTransaction: true,
		DisableAutomaticPing:   true,
		NowFunc:                now,
		Logger:                 queryLogger{log: log},
		// Every recorded error passes through classify (see classifying).
		TranslateError: true,
	})
	if err != nil {
		return nil, nil, err
	}
	// Rows() sets the statement's error itself, past TranslateError:
	// classify it too, so every statement's error is classified.
	err = db.Callback().Row().After("gorm:row").Register("herd:classify", func(tx *gorm.DB) {
		tx.Error = classify(tx.Error)
	})
	if err != nil {
		return nil, nil, err
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, nil, err
	}
	if err := sqlDB.PingContext(ctx); err != nil {
		return nil, nil, errors.Join(err, sqlDB.Close())
	}
	return db, sqlDB, nil
}

// Close releases every connection. The Store must not be used afterwards.
func (s *Store) Close() error {
	var errs []error
	for _, db := range s.pools {
		if err := db.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close %s: %w", s.dialect, err))
		}
	}
	return errors.Join(errs...)
}

// Dialect reports the database in use: "sqlite" or "postgres".
func (s *Store) Dialect() string { return s.dialect }

// Ping checks that the database answers on every connection pool and
// that the writer can write: a SQLite file locked by another process, or
// a PostgreSQL server in recovery, answers reads but takes no writes. A
// failure is unavailable (see Unavailable).
func (s *Store) Ping(ctx context.Context) error {
	for _, db := range s.pools {
		if err := db.PingContext(ctx); err != nil {
			return fmt.Errorf("ping %s: %w", s.dialect, classify(err))
		}
	}
	// An empty write transaction takes the SQLite write lock (transactions
	// begin IMMEDIATE) and fails on a read-only PostgreSQL.
	err := s.write.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return tx.Exec("UPDATE sessions SET state = state WHERE 1 = 0").Error
	})
	if err != nil {
		return fmt.Errorf("ping %s writer: %w", s.dialect, classify(err))
	}
	return nil
}

// migrate brings db's schema up to the newest migration embedded for
// dialect. It refuses a database that a newer herd has already migrated past
// this build's newest migration: running old code against a newer schema
// could corrupt data the newer code relies on.
func migrate(ctx context.Context, db *sql.DB, dialect string, log *slog.Logger) error {
	p, err := newProvider(db, dialect)
	if err != nil {
		return err
	}
	current, newest, err := p.GetVersions(ctx)
	if err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if current > newest {
		return fmt.Errorf("database schema version %d is newer than version %d, the newest this herd knows: upgrade herd or use another database", current, newest)
	}
	applied, err := p.Up(ctx)
	if err != nil {
		return fmt.Errorf("migrate %s schema: %w", dialect, err)
	}
	for _, r := range applied {
		log.InfoContext(ctx, "applied database migration",
			"dialect", dialect, "version", r.Source.Version, "duration", r.Duration)
	}
	return nil
}

// newProvider builds the goose provider for dialect's migration tree. On
// PostgreSQL, replicas starting together take turns through a session
// advisory lock.
func newProvider(db *sql.DB, dialect string) (*goose.Provider, error) {
	tree, err := fs.Sub(migrations.FS, dialect)
	if err != nil {
		return nil, fmt.Errorf("load %s migrations: %w", dialect, err)
	}
	gooseDialect := goose.DialectSQLite3
	var opts []goose.ProviderOption
	if dialect == dialectPostgres {
		gooseDialect = goose.DialectPostgres
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return nil, fmt.Errorf("create migration lock: %w", err)
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	p, err := goose.NewProvider(gooseDialect, db, tree, opts...)
	if err != nil {
		return nil, fmt.Errorf("load %s migrations: %w", dialect, err)
	}
	return p, nil
}
