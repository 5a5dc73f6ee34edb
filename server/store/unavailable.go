package store

import (
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mattn/go-sqlite3"
	"gorm.io/gorm"

	"github.com/herd-dev/herd/shared"
)

// unavailableError is a database error that says the database cannot be
// reached or cannot take writes right now (PostgreSQL down or restarting,
// a connection cut, SQLite locked by another process past the busy
// timeout, a full disk), as opposed to a statement that is wrong. Retrying
// the same work later may succeed. It wraps the driver's error, so the
// existing classifiers still see it, and reads as the protocol's
// unavailable error to errors.As.
type unavailableError struct{ cause error }

// Error implements error.
func (e *unavailableError) Error() string { return "database unavailable: " + e.cause.Error() }

// Unwrap returns the driver's error.
func (e *unavailableError) Unwrap() error { return e.cause }

// As makes the error a *shared.Error with code unavailable, so every edge
// (WebSocket, REST) answers it as such without knowing the store.
func (e *unavailableError) As(target any) bool {
	if t, ok := target.(**shared.Error); ok {
		*t = shared.Errorf(shared.CodeUnavailable, "the database is unavailable; retry shortly")
		return true
	}
	return false
}

// unstorableError is a PostgreSQL refusal of text it cannot hold (a NUL
// character, SQLSTATE 22021): the caller's input is at fault.
type unstorableError struct{ cause error }

// Error implements error.
func (e *unstorableError) Error() string { return "text cannot be stored: " + e.cause.Error() }

// Unwrap returns the driver's error.
func (e *unstorableError) Unwrap() error { return e.cause }

// As makes the error a *shared.Error with code bad_request.
func (e *unstorableError) As(target any) bool {
	if t, ok := target.(**shared.Error); ok {
		*t = shared.Errorf(shared.CodeBadRequest, "the text holds a NUL character or invalid UTF-8, which cannot be stored")
		return true
	}
	return false
}

// Unavailable reports whether err says the database could not be reached
// or could not take the work right now, so the same work may succeed when
// retried later: the server is down, restarting, in recovery or read-only
// during a failover, out of connections or disk, a connection broke or
// timed out, SQLite is locked by another process, or the transaction lost
// to a concurrent one (serialization failure, deadlock).
func Unavailable(err error) bool {
	var ue *unavailableError
	return errors.As(err, &ue) || isUnavailable(err)
}

// PostgreSQL error codes and classes that say the server is unavailable.
const (
	pgClassConnection      = "08" // connection_exception and its subclasses
	pgClassResources       = "53" // insufficient_resources: disk full, out of memory, too many connections
	pgAdminShutdown        = "57P01"
	pgCrashShutdown        = "57P02"
	pgCannotConnectNow     = "57P03"
	pgReadOnlyTransaction  = "25006" // a standby, or a primary demoted by a failover
	pgSerializationFailure = "40001"
	pgDeadlockDetected     = "40P01"
	pgCharacterNotInRepert = "22021"
)

// isUnavailable classifies a driver or network error.
func isUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case strings.HasPrefix(pe.Code, pgClassConnection), strings.HasPrefix(pe.Code, pgClassResources),
			pe.Code == pgAdminShutdown, pe.Code == pgCrashShutdown, pe.Code == pgCannotConnectNow,
			pe.Code == pgReadOnlyTransaction, pe.Code == pgSerializationFailure, pe.Code == pgDeadlockDetected:
			return true
		}
		return false
	}
	var se sqlite3.Error
	if errors.As(err, &se) {
		switch se.Code {
		case sqlite3.ErrBusy, sqlite3.ErrLocked, sqlite3.ErrIoErr, sqlite3.ErrFull:
			return true
		}
		return false
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		pgconn.SafeToRetry(err) || pgconn.Timeout(err)
}

// classify wraps a database error the caller can act on: unavailable or
// unstorable. Every other error is returned as it is.
func classify(err error) error {
	if err == nil || errors.Is(err, gorm.ErrRecordNotFound) {
		return err
	}
	var ue *unavailableError
	var ne *unstorableError
	if errors.As(err, &ue) || errors.As(err, &ne) {
		return err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == pgCharacterNotInRepert {
		return &unstorableError{cause: err}
	}
	if isUnavailable(err) {
		return &unavailableError{cause: err}
	}
	return err
}

// classifying wraps a gorm dialector so that every error gorm records for
// a statement, a transaction's begin or its commit passes through
// classify (gorm's TranslateError hook). It forwards the savepoint
// methods the store's nested transactions need.
type classifying struct {
	gorm.Dialector
	savepoints gorm.SavePointerDialectorInterface
}

// newClassifying wraps d; d must support savepoints, as both of the
// store's dialects do.
func newClassifying(d gorm.Dialector) (classifying, error) {
	sp, ok := d.(gorm.SavePointerDialectorInterface)
	if !ok {
		return classifying{}, errors.New("the database dialect does not support savepoints")
	}
	return classifying{Dialector: d, savepoints: sp}, nil
}

// Translate implements gorm.ErrorTranslator.
func (c classifying) Translate(err error) error { return classify(err) }

// SavePoint implements gorm.SavePointerDialectorInterface.
func (c classifying) SavePoint(tx *gorm.DB, name string) error {
	return c.savepoints.SavePoint(tx, name)
}

// RollbackTo implements gorm.SavePointerDialectorInterface.
func (c classifying) RollbackTo(tx *gorm.DB, name string) error {
	return c.savepoints.RollbackTo(tx, name)
}
