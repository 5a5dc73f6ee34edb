package worktree

import "strings"

const (
	// shortIDLen is the length of the task id's part of a branch name.
	shortIDLen = 8
	// maxSlugLen bounds the title's part of a branch name, in bytes.
	maxSlugLen = 40
)

// BranchName returns the branch of a task's worktree:
// "herd/<short-id>-<slug>". The short id is the last eight letters and
// digits of taskID, lowercased: herd's ids are UUIDv7s, whose leading
// characters are a timestamp shared by every task created within the same
// minute, while the trailing ones are random. The slug is title's runs of
// ASCII letters and digits, lowercased and joined by '-', cut to at most
// 40 bytes at the end of a word when there is one; a title without any
// gives "herd/<short-id>".
func BranchName(taskID, title string) string {
	id := slug(taskID, false)
	short := id[max(len(id)-shortIDLen, 0):]
	words := slug(title, true)
	if len(words) > maxSlugLen {
		cut := words[:maxSlugLen]
		if words[maxSlugLen] != '-' {
			// Drop the word the cut went through, unless it is the
			// only one.
			if i := strings.LastIndexByte(cut, '-'); i > 0 {
				cut = cut[:i]
			}
		}
		words = strings.TrimRight(cut, "-")
	}
	if words == "" {
		return "herd/" + short
	}
	return "herd/" + short + "-" + words
}

// slug returns the ASCII letters and digits of s, lowercased, with each
// run of other characters between two of them replaced by '-' when dashes
// is true and dropped otherwise.
func slug(s string, dashes bool) string {
	var b strings.Builder
	gap := false
	for i := range len(s) {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		default:
			gap = b.Len() > 0
			continue
		}
		if gap && dashes {
			b.WriteByte('-')
		}
		gap = false
		b.WriteByte(c)
	}
	return b.String()
}
