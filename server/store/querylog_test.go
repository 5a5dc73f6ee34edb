package store

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestQueryLoggerReportsSlowQueriesWithoutParameters(t *testing.T) {
	var buf bytes.Buffer
	l := queryLogger{log: slog.New(slog.NewTextHandler(&buf, nil))}
	ctx := context.Background()

	sql, params := l.ParamsFilter(ctx, "SELECT * FROM tasks WHERE id = ?", "secret-id")
	if params != nil {
		t.Fatalf("ParamsFilter kept parameters %v", params)
	}
	l.Trace(ctx, time.Now(), func() (string, int64) { return sql, 1 }, nil)
	if buf.Len() != 0 {
		t.Fatalf("a fast query was logged: %s", buf.String())
	}
	l.Trace(ctx, time.Now().Add(-time.Second), func() (string, int64) { return sql, 1 }, nil)
	out := buf.String()
	if !strings.Contains(out, "slow database query") || !strings.Contains(out, "WHERE id = ?") {
		t.Fatalf("slow query log %q lacks the message or the SQL", out)
	}
}
