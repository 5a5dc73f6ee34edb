package migrations

import (
	"io/fs"
	"reflect"
	"testing"
)

func TestBothDialectsHaveTheSameMigrations(t *testing.T) {
	sqlite, err := fs.Glob(FS, "sqlite/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	postgres, err := fs.Glob(FS, "postgres/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	if len(sqlite) == 0 {
		t.Fatal("no migrations embedded")
	}
	names := func(paths []string, dir string) []string {
		out := make([]string, len(paths))
		for i, p := range paths {
			out[i] = p[len(dir)+1:]
		}
		return out
	}
	if a, b := names(sqlite, "sqlite"), names(postgres, "postgres"); !reflect.DeepEqual(a, b) {
		t.Fatalf("migration files differ between dialects:\nsqlite:   %v\npostgres: %v", a, b)
	}
}
