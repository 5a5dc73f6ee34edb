package state

// FollowSlack is how close to the bottom, in CSS pixels, a transcript still
// counts as being at the bottom: a person who scrolled to within a line of
// the end wants to keep following.
const FollowSlack = 48

// Follow decides whether a transcript follows new output. It follows while
// the person is at the bottom; scrolling up stops it, and output that
// arrives meanwhile is unseen until they come back down or jump there.
// The zero Follow follows.
type Follow struct {
	away   bool
	unseen bool
}

// AtBottom reports whether a scroll area with these measurements (CSS
// pixels) shows its end.
func AtBottom(scrollTop, scrollHeight, clientHeight float64) bool {
	return scrollHeight-scrollTop-clientHeight <= FollowSlack
}

// Following reports whether new output should scroll into view.
func (f *Follow) Following() bool { return !f.away }

// Unseen reports whether output arrived while the person was scrolled up:
// the "new output" button shows.
func (f *Follow) Unseen() bool { return f.unseen }

// Scrolled records where the person scrolled to and reports whether that
// changed what the view shows (following, or the button).
func (f *Follow) Scrolled(atBottom bool) bool {
	before := *f
	f.away = !atBottom
	if atBottom {
		f.unseen = false
	}
	return *f != before
}

// Output records that the transcript changed and reports whether the view
// should scroll to its end.
func (f *Follow) Output() bool {
	if f.away {
		f.unseen = true
		return false
	}
	return true
}

// Jump is the person asking for the newest output: follow again.
func (f *Follow) Jump() { *f = Follow{} }
