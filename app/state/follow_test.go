package state

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestATranscriptFollowsOutputUntilThePersonScrollsUp(t *testing.T) {
	var f Follow
	assert.True(t, f.Output(), "a fresh view follows")
	assert.False(t, f.Unseen())

	assert.True(t, f.Scrolled(false), "scrolling up changes what the view shows")
	assert.False(t, f.Output(), "scrolled up: new output does not move the view")
	assert.True(t, f.Unseen(), "and the new output button shows")
	assert.False(t, f.Scrolled(false), "scrolling further up changes nothing")

	assert.True(t, f.Scrolled(true), "back at the bottom")
	assert.False(t, f.Unseen())
	assert.True(t, f.Output(), "following again")
}

func TestJumpingToNewOutputFollowsAgain(t *testing.T) {
	var f Follow
	f.Scrolled(false)
	f.Output()
	f.Jump()
	assert.True(t, f.Following())
	assert.False(t, f.Unseen())
}

func TestAtBottomAllowsALineOfSlack(t *testing.T) {
	assert.True(t, AtBottom(600, 1000, 400))
	assert.True(t, AtBottom(600-FollowSlack, 1000, 400))
	assert.False(t, AtBottom(600-FollowSlack-1, 1000, 400))
	assert.True(t, AtBottom(0, 300, 400), "content shorter than the view")
}
