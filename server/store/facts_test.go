package store

import (
	"context"
	"math"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/herd-dev/herd/shared"
)

func TestSessionFactsSurviveAReopen(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		cfg := MustConfig(t, dialect)
		s := mustOpenConfig(t, cfg)
		task := mustTask(t, s, shared.TaskCreateRequest{WorkspaceID: mustWorkspace(t, s, "w").ID, Title: "t"})
		id := mustSession(t, s, task.ID)
		before, err := s.GetSession(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if before.Title != "" || before.Usage != nil {
			t.Fatalf("a new session has title %q, usage %+v", before.Title, before.Usage)
		}
		if cmds, err := s.SessionCommands(ctx, id); err != nil || cmds == nil || len(cmds) != 0 {
			t.Fatalf("new session commands = %#v, %v", cmds, err)
		}

		if _, changed, err := s.SetSessionTitle(ctx, id, "Fix the\tlogin\x1b[31m page "); err != nil || !changed {
			t.Fatalf("set title: changed %v, %v", changed, err)
		}
		cost := &shared.Cost{Amount: 0.0007000000000000001, Currency: "usd"}
		if _, ch, err := s.SetSessionUsage(ctx, id, 84_000, 200_000, cost); err != nil || ch != (UsageChange{Usage: true, Cost: true}) {
			t.Fatalf("set usage: %+v, %v", ch, err)
		}
		cmds := []shared.SlashCommand{{Name: "debug", Description: "Debug\nthe session", Hint: "[issue description]"}, {Name: "compact"}}
		if _, changed, err := s.SetSessionCommands(ctx, id, cmds); err != nil || !changed {
			t.Fatalf("set commands: changed %v, %v", changed, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}

		s = mustOpenConfig(t, cfg)
		got, err := s.GetSession(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		wantUsage := shared.SessionUsage{Used: 84_000, Size: 200_000, Cost: &shared.Cost{Amount: 0.0007000000000000001, Currency: "USD"}}
		if got.Title != "Fix the login[31m page" || got.Usage == nil || got.Usage.Used != wantUsage.Used ||
			got.Usage.Size != wantUsage.Size || got.Usage.Cost == nil || *got.Usage.Cost != *wantUsage.Cost {
			t.Fatalf("reopened session: title %q, usage %+v cost %+v", got.Title, got.Usage, got.Usage.Cost)
		}
		list, err := s.ListSessions(ctx, task.ID)
		if err != nil || len(list) != 1 || list[0].Title != got.Title || list[0].Usage.Cost == nil {
			t.Fatalf("session.list carries %+v, %v", list, err)
		}
		stored, err := s.SessionCommands(ctx, id)
		want := []shared.SlashCommand{{Name: "debug", Description: "Debug the session", Hint: "[issue description]"}, {Name: "compact"}}
		if err != nil || len(stored) != 2 || stored[0] != want[0] || stored[1] != want[1] {
			t.Fatalf("reopened commands = %+v, %v", stored, err)
		}
		srcs, err := s.SummarySources(ctx, []string{task.ID})
		if err != nil || len(srcs) != 1 || len(srcs[0].Sessions) != 1 || srcs[0].Sessions[0].Usage == nil ||
			*srcs[0].Sessions[0].Usage.Cost != *wantUsage.Cost {
			t.Fatalf("summary sources carry sessions %+v, %v", srcs, err)
		}
	})
}

func TestSessionUsageReportsOnlyWhatChanged(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		task := mustTask(t, s, shared.TaskCreateRequest{WorkspaceID: mustWorkspace(t, s, "w").ID, Title: "t"})
		id := mustSession(t, s, task.ID)
		usd := func(a float64) *shared.Cost { return &shared.Cost{Amount: a, Currency: "USD"} }
		steps := []struct {
			name       string
			used, size int
			cost       *shared.Cost
			want       UsageChange
			wantCost   *shared.Cost
		}{
			{"first usage without cost", 101, 1000, nil, UsageChange{Usage: true}, nil},
			{"the same usage again", 101, 1000, nil, UsageChange{}, nil},
			{"the cycle's cost", 115, 1000, usd(0.5), UsageChange{Usage: true, Cost: true}, usd(0.5)},
			{"usage alone keeps the cost", 130, 1000, nil, UsageChange{Usage: true}, usd(0.5)},
			{"the same cost again", 130, 1000, usd(0.5), UsageChange{}, usd(0.5)},
			{"a negative cost is ignored", 130, 1000, usd(-1), UsageChange{}, usd(0.5)},
			{"an infinite cost is ignored", 130, 1000, usd(math.Inf(1)), UsageChange{}, usd(0.5)},
			{"a currency that is no code is ignored", 130, 1000, &shared.Cost{Amount: 9, Currency: "$"}, UsageChange{}, usd(0.5)},
			{"negative tokens count as none", -5, 1000, nil, UsageChange{Usage: true}, usd(0.5)},
		}
		for _, st := range steps {
			got, ch, err := s.SetSessionUsage(ctx, id, st.used, st.size, st.cost)
			if err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
			if ch != st.want {
				t.Errorf("%s: change %+v, want %+v", st.name, ch, st.want)
			}
			if c := got.Usage.Cost; (c == nil) != (st.wantCost == nil) || c != nil && *c != *st.wantCost {
				t.Errorf("%s: cost %+v, want %+v", st.name, c, st.wantCost)
			}
		}
		if _, _, err := s.SetSessionUsage(ctx, "missing", 1, 1, nil); shared.ErrorCode(err) != shared.CodeNotFound {
			t.Fatalf("usage of a missing session: %v", err)
		}
		if _, _, err := s.SetSessionCommands(ctx, "missing", nil); shared.ErrorCode(err) != shared.CodeNotFound {
			t.Fatalf("commands of a missing session: %v", err)
		}
	})
}

func TestCleanCommandsBoundsWhatAnAgentSends(t *testing.T) {
	long := strings.Repeat("é", 400)
	in := []shared.SlashCommand{
		{Name: "ok", Description: long, Hint: long},
		{Name: ""},
		{Name: "has space"},
		{Name: "/slash"},
		{Name: "bidi\u202e"},
		{Name: strings.Repeat("n", shared.MaxCommandNameBytes+1)},
		{Name: "ok", Description: "a repeat"},
	}
	for i := range shared.MaxSlashCommands + 10 {
		in = append(in, shared.SlashCommand{Name: "c" + strings.Repeat("x", i%50) + string(rune('a'+i%26)) + string(rune('a'+i/26))})
	}
	out := CleanCommands(in)
	if len(out) != shared.MaxSlashCommands {
		t.Fatalf("kept %d commands, want %d", len(out), shared.MaxSlashCommands)
	}
	first := out[0]
	if first.Name != "ok" || len(first.Description) > shared.MaxCommandDescriptionBytes || !strings.HasSuffix(first.Description, "…") ||
		len(first.Hint) > shared.MaxCommandHintBytes || !strings.HasSuffix(first.Hint, "…") {
		t.Fatalf("first command %+v", first)
	}
	for _, c := range out[1:] {
		if !strings.HasPrefix(c.Name, "c") {
			t.Fatalf("kept a bad or repeated command %q", c.Name)
		}
	}
	if got := CleanCommands(nil); got == nil {
		t.Fatal("no commands clean to nil, want an empty list")
	}
}

func TestCleanTitle(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "Refactor the store", "Refactor the store"},
		{"white space collapsed", "  a\n\n b\t c ", "a b c"},
		{"controls and bidi dropped", "a\x00b\x07c\u202ed", "abcd"},
		{"invalid UTF-8 replaced", "a\xffb", "a\uFFFDb"},
		{"long cut on a character", strings.Repeat("ü", 100), strings.Repeat("ü", 58) + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := CleanTitle(tc.in); got != tc.want {
				t.Fatalf("CleanTitle(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// FuzzCleanAgentFacts feeds arbitrary agent text to the cleaners: what
// comes out is always valid UTF-8 within its bound, with no control or
// format characters, and cleaning it again changes nothing.
func FuzzCleanAgentFacts(f *testing.F) {
	for _, seed := range []string{"", "compact", "a b", "/x", "\x00\x1b[2J", "\u202eevil", strings.Repeat("字", 100), "\xff\xfe"} {
		f.Add(seed, seed)
	}
	f.Fuzz(func(t *testing.T, name, text string) {
		title := CleanTitle(text)
		if len(title) > shared.MaxSessionTitleBytes || !utf8.ValidString(title) || strings.IndexFunc(title, unwanted) >= 0 {
			t.Fatalf("CleanTitle(%q) = %q", text, title)
		}
		if CleanTitle(title) != title {
			t.Fatalf("CleanTitle is not idempotent on %q", title)
		}
		cmds := CleanCommands([]shared.SlashCommand{{Name: name, Description: text, Hint: text}})
		for _, c := range cmds {
			if c.Name != name || !commandName(c.Name) || len(c.Description) > shared.MaxCommandDescriptionBytes ||
				len(c.Hint) > shared.MaxCommandHintBytes || strings.IndexFunc(c.Description+c.Hint, unwanted) >= 0 ||
				!utf8.ValidString(c.Description+c.Hint) {
				t.Fatalf("CleanCommands kept %+v from name %q, text %q", c, name, text)
			}
		}
	})
}

// unwanted reports characters no cleaned fact holds: controls, format
// characters and white space other than a plain space.
func unwanted(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.IsSpace(r) && r != ' '
}
