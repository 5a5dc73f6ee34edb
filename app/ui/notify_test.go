package ui

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/shared"
)

// withPanel opens the notifications panel of s on w1 as its load
// answered: the browser's support and permission, the device it holds a
// credential for, whether the server's key came, and the devices.
func withPanel(t *testing.T, s *shell, support state.PushSupport, perm state.PushPermission, deviceID string, key bool, devices ...shared.PushDevice) *shell {
	t.Helper()
	p := &s.push.state
	p.Select("w1")
	n, ok := p.Begin(state.PushLoading)
	require.True(t, ok)
	p.Checked(n, support, perm, deviceID)
	if key {
		p.Configured(n, "BPUBLIC")
	}
	p.Listed(n, devices)
	p.Done(n, "", "")
	s.push.open = true
	return s
}

func pushDevice(id, name string, prefs shared.PushPreferences) shared.PushDevice {
	return shared.PushDevice{ID: id, WorkspaceID: "w1", Name: name, Preferences: prefs, PushService: "fcm.googleapis.com"}
}

func TestTheBellOpensNotificationsOnDesktopAndPhone(t *testing.T) {
	for _, phone := range []bool{false, true} {
		s := booted()
		s.phone = phone
		markup := html(s)
		bell := elementWith(t, markup, "notify-open")
		assert.Contains(t, bell, `aria-label="Notifications on this device"`)
		assert.Contains(t, bell, `aria-expanded="false"`)
		assert.Contains(t, bell, `aria-controls="notify-panel"`)
		assert.NotContains(t, markup, `id="notify-panel"`, "closed, the panel is not in the page")
		assert.Regexp(t, `<div class="notify-slot"></div>`, markup, "its slot stays, empty")
	}
}

func TestTheOpenPanelIsModal(t *testing.T) {
	s := withPanel(t, booted(), state.PushSupported, state.PermissionDefault, "", true)
	markup := html(s)
	assert.Contains(t, elementWith(t, markup, "notify-panel"), `role="dialog"`)
	// go-app's server encoder writes a "true" attribute bare.
	assert.Regexp(t, `\baria-modal[ >]`, elementWith(t, markup, "notify-panel"))
	assert.Regexp(t, `\baria-expanded[ >]`, elementWith(t, markup, "notify-open"))
	for _, pane := range []string{`<header[^>]*\binert\b`, `<main[^>]*\binert\b`, `<aside[^>]*\binert\b`} {
		assert.Regexp(t, pane, markup)
	}
	assert.Contains(t, elementWith(t, markup, "notify-close"), `aria-label="Close notifications"`)
}

func TestThePanelSaysWhyThisBrowserCannotBeNotified(t *testing.T) {
	tests := []struct {
		name    string
		support state.PushSupport
		perm    state.PushPermission
		want    string
	}{
		{"not HTTPS", state.PushInsecure, state.PermissionDefault, "open herd over HTTPS, or at localhost"},
		{"no Web Push", state.PushNoPushManager, state.PermissionDefault, "Home Screen"},
		{"denied", state.PushSupported, state.PermissionDenied, "To undo it, open the site&#39;s settings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			markup := html(withPanel(t, booted(), tt.support, tt.perm, "", true))
			assert.Contains(t, markup, tt.want)
			assert.NotContains(t, markup, `id="notify-turn-on"`, "there is nothing to turn on")
		})
	}
}

func TestTurningOnIsAnExplicitButton(t *testing.T) {
	markup := html(withPanel(t, booted(), state.PushSupported, state.PermissionDefault, "", true))
	button := elementWith(t, markup, "notify-turn-on")
	assert.NotRegexp(t, `\bdisabled\b`, button)
	assert.Contains(t, markup, "Turn on notifications")
	assert.NotContains(t, markup, `id="notify-test"`)

	withoutKey := html(withPanel(t, booted(), state.PushSupported, state.PermissionDefault, "", false))
	assert.Regexp(t, `\bdisabled\b`, elementWith(t, withoutKey, "notify-turn-on"), "subscribing needs the server's key")
}

func TestTurningOnSaysSoWhileItRuns(t *testing.T) {
	s := withPanel(t, booted(), state.PushSupported, state.PermissionDefault, "", true)
	_, ok := s.push.state.Begin(state.PushTurningOn)
	require.True(t, ok)
	markup := html(s)
	assert.Regexp(t, `\bdisabled\b`, elementWith(t, markup, "notify-turn-on"), "a second click does not subscribe twice")
	assert.Contains(t, markup, "Turning on…")
}

func TestAnOnDeviceShowsItsPreferencesAndActions(t *testing.T) {
	here := pushDevice("d1", "Chromium on Linux", shared.PushPreferences{Requests: true, PullRequests: true})
	phone := pushDevice("d2", "Firefox on Android", shared.DefaultPushPreferences)
	phone.LastSentAt = &t0
	markup := html(withPanel(t, booted(), state.PushSupported, state.PermissionGranted, "d1", true, here, phone))

	assert.Contains(t, markup, "<strong>Chromium on Linux</strong>")
	checked := map[string]bool{"requests": true, "errors": false, "turns": false, "pull_requests": true}
	for pref, on := range checked {
		box := elementWith(t, markup, "notify-pref-"+pref)
		assert.Contains(t, box, `type="checkbox"`)
		if on {
			assert.Regexp(t, `\bchecked(="true")?[ >]`, box, pref)
		} else {
			assert.Contains(t, box, `checked="false"`, pref)
		}
	}
	for _, label := range []string{"Permission and clarification requests", "Agent errors", "Finished turns", "Pull requests turning red or green"} {
		assert.Contains(t, markup, label)
	}
	assert.NotRegexp(t, `\bdisabled\b`, elementWith(t, markup, "notify-test"))
	assert.Contains(t, markup, "Send a test notification")
	assert.NotRegexp(t, `\bdisabled\b`, elementWith(t, markup, "notify-turn-off"))

	others := regexp.MustCompile(`<li[^>]*\bdata-device-id="([^"]+)"`).FindAllStringSubmatch(markup, -1)
	require.Len(t, others, 1, "this browser is not among the others")
	assert.Equal(t, "d2", others[0][1])
	assert.Contains(t, markup, "Firefox on Android")
	assert.Contains(t, markup, "fcm.googleapis.com · last notified")
	assert.Regexp(t, `Remove\s*<span class="visually-hidden"> Firefox on Android</span>`, markup,
		"the button names its device to a screen reader")
}

func TestWhileAnOperationRunsThePanelTakesNoOther(t *testing.T) {
	here := pushDevice("d1", "Here", shared.DefaultPushPreferences)
	s := withPanel(t, booted(), state.PushSupported, state.PermissionGranted, "d1", true, here, pushDevice("d2", "Phone", shared.DefaultPushPreferences))
	_, ok := s.push.state.Begin(state.PushTesting)
	require.True(t, ok)
	markup := html(s)
	for _, id := range []string{"notify-test", "notify-turn-off", "notify-pref-errors"} {
		assert.Regexp(t, `\bdisabled\b`, elementWith(t, markup, id), id)
	}
	remove := regexp.MustCompile(`<li[^>]*\bdata-device-id="d2"[^>]*>[\s\S]*?(<button[^>]*>)`).FindStringSubmatch(markup)
	require.Len(t, remove, 2)
	assert.Regexp(t, `\bdisabled\b`, remove[1], "another device's remove button")
}

func TestThePanelShowsAFailureAndANotice(t *testing.T) {
	s := withPanel(t, booted(), state.PushSupported, state.PermissionGranted, "d1", true, pushDevice("d1", "Here", shared.DefaultPushPreferences))
	p := &s.push.state
	n, _ := p.Begin(state.PushTesting)
	p.Done(n, "push service refused: 403", "")
	assert.Contains(t, elementWith(t, html(s), "notify-error"), `role="alert"`)
	assert.Contains(t, html(s), "push service refused: 403")

	n, _ = p.Begin(state.PushTesting)
	p.Done(n, "", "Sent.")
	markup := html(s)
	assert.Contains(t, elementWith(t, markup, "notify-notice"), `role="status"`)
	assert.NotContains(t, markup, `id="notify-error"`)
}

func TestAnotherWorkspacesDevicesAreNotListed(t *testing.T) {
	s := withPanel(t, booted(), state.PushSupported, state.PermissionGranted, "", true, pushDevice("d2", "Phone", shared.DefaultPushPreferences))
	markup := html(s)
	assert.Contains(t, markup, "Phone")
	assert.NotContains(t, markup, "No other device")

	s = withPanel(t, booted(), state.PushSupported, state.PermissionGranted, "", true)
	assert.Contains(t, html(s), "No other device of this workspace gets notifications.")
}
