package store

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"gorm.io/gorm/logger"
)

// slowQueryThreshold is the statement duration from which a query is logged.
const slowQueryThreshold = 200 * time.Millisecond

// queryLogger is gorm's logger for the store. It reports slow statements at
// warn level with their SQL text but never their parameters, which may hold
// prompts or tokens. Failed statements are not logged: their errors are
// returned to the caller, which logs them once if it must.
type queryLogger struct {
	log *slog.Logger
}

// LogMode implements logger.Interface; the store's logging does not change
// with gorm's log levels.
func (l queryLogger) LogMode(logger.LogLevel) logger.Interface { return l }

// Info implements logger.Interface and discards gorm's informational notes.
func (l queryLogger) Info(context.Context, string, ...any) {}

// Warn implements logger.Interface.
func (l queryLogger) Warn(ctx context.Context, msg string, args ...any) {
	l.log.WarnContext(ctx, "gorm: "+fmt.Sprintf(msg, args...))
}

// Error implements logger.Interface for gorm's own errors (not failed
// statements, which go to Trace).
func (l queryLogger) Error(ctx context.Context, msg string, args ...any) {
	l.log.ErrorContext(ctx, "gorm: "+fmt.Sprintf(msg, args...))
}

// Trace implements logger.Interface: it logs statements slower than
// slowQueryThreshold.
func (l queryLogger) Trace(ctx context.Context, begin time.Time, fc func() (string, int64), _ error) {
	elapsed := time.Since(begin)
	if elapsed < slowQueryThreshold {
		return
	}
	sql, rows := fc()
	l.log.WarnContext(ctx, "slow database query", "duration", elapsed, "rows", rows, "sql", sql)
}

// ParamsFilter implements gorm.ParamsFilter: it drops the parameters so that
// the SQL handed to Trace keeps its placeholders.
func (l queryLogger) ParamsFilter(_ context.Context, sql string, _ ...any) (string, []any) {
	return sql, nil
}
