package store

import (
	"context"
	"testing"
	"time"
)

func TestTmpCompare(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := MustOpen(t, dialect)
		ctx := context.Background()
		w := mustWorkspace(t, s, "w")
		var ids, repos []string
		for range 200 {
			task := sourceTask(t, s, w.ID, "/a", "/b")
			ids = append(ids, task.ID)
			for _, r := range task.Repositories {
				repos = append(repos, r.ID)
			}
		}
		seedObservations(&testing.B{}, s, repos, 1000)
		for name, q := range map[string]string{
			"correlated": `SELECT r.task_id, r.id, o.observed_at FROM task_repositories r
		LEFT JOIN git_observations o ON o.id = (
			SELECT g.id FROM git_observations g WHERE g.task_repository_id = r.id AND g.error = ''
			ORDER BY g.observed_at DESC, g.id DESC LIMIT 1)
		WHERE r.task_id IN ? ORDER BY r.task_id, r.position`,
			"row_number": `SELECT r.task_id, r.id, o.observed_at FROM task_repositories r
		LEFT JOIN (SELECT g.task_repository_id, g.observed_at, ROW_NUMBER() OVER (PARTITION BY g.task_repository_id ORDER BY g.observed_at DESC, g.id DESC) AS rn
			FROM git_observations g JOIN task_repositories rr ON rr.id = g.task_repository_id WHERE rr.task_id IN ? AND g.error = '') o ON o.task_repository_id = r.id AND o.rn = 1
		WHERE r.task_id IN ? ORDER BY r.task_id, r.position`,
		} {
			args := []any{ids}
			if name == "row_number" {
				args = append(args, ids)
			}
			begin := time.Now()
			for range 5 {
				rows, err := s.write.WithContext(ctx).Raw(q, args...).Rows()
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for rows.Next() {
					n++
				}
				rows.Close()
				if n != 400 {
					t.Fatal(n)
				}
			}
			t.Logf("%s: %v", name, time.Since(begin)/5)
		}
	})
}
