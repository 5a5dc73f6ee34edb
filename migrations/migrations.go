// Package migrations holds herd's versioned database schema: one tree of goose
// SQL migrations per dialect (sqlite/ and postgres/), embedded in the binary.
//
// Both trees describe the same tables and columns and carry the same version
// numbers; only column types and dialect-specific statements differ. A new
// schema change adds a file with the next version number to both trees. The
// store package applies them with goose's Provider API when it opens a
// database.
package migrations

import "embed"

// FS holds the migration files, under sqlite/ and postgres/.
//
//go:embed sqlite/*.sql postgres/*.sql
var FS embed.FS
