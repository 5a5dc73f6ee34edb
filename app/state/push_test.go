package state

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/shared"
)

// pushOf returns w1's panel state once its load answered: the browser's
// support and permission, the device it holds a credential for, and the
// server's devices.
func pushOf(t *testing.T, support PushSupport, perm PushPermission, deviceID string, devices ...shared.PushDevice) *Push {
	t.Helper()
	var p Push
	p.Select("w1")
	n, ok := p.Begin(PushLoading)
	require.True(t, ok)
	p.Checked(n, support, perm, deviceID)
	p.Configured(n, "BPUBLIC")
	p.Listed(n, devices)
	p.Done(n, "", "")
	return &p
}

func device(id, name string) shared.PushDevice {
	return shared.PushDevice{ID: id, WorkspaceID: "w1", Name: name, Preferences: shared.DefaultPushPreferences}
}

func TestThePanelSaysWhyABrowserCannotBeNotified(t *testing.T) {
	tests := []struct {
		name    string
		support PushSupport
		perm    PushPermission
		phase   PushPhase
		why     string
	}{
		{"not a secure context", PushInsecure, PermissionDefault, PushUnsupported, "HTTPS, or at localhost"},
		{"no service worker", PushNoServiceWorker, PermissionDefault, PushUnsupported, "no service worker"},
		{"no push manager", PushNoPushManager, PermissionDefault, PushUnsupported, "add herd to the Home Screen"},
		{"no notifications", PushNoNotification, PermissionDefault, PushUnsupported, "cannot show notifications"},
		{"permission denied, with how to undo it", PushSupported, PermissionDenied, PushBlocked, "allow Notifications"},
		{"able, not asked yet", PushSupported, PermissionDefault, PushOff, ""},
		{"able and allowed", PushSupported, PermissionGranted, PushOff, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := pushOf(t, tt.support, tt.perm, "")
			assert.Equal(t, tt.phase, p.Phase())
			if tt.why == "" {
				assert.Empty(t, p.Why())
				assert.True(t, p.CanTurnOn())
				return
			}
			assert.Contains(t, p.Why(), tt.why)
			assert.False(t, p.CanTurnOn(), "nothing to turn on")
		})
	}
}

func TestThePanelIsCheckingUntilTheBrowserAnswered(t *testing.T) {
	var p Push
	p.Select("w1")
	assert.Equal(t, PushChecking, p.Phase())
	assert.False(t, p.CanTurnOn())
}

func TestThisBrowserIsOnOnlyWhileTheServerListsItsDeviceAndNotificationsAreAllowed(t *testing.T) {
	tests := []struct {
		name     string
		perm     PushPermission
		deviceID string
		phase    PushPhase
	}{
		{"listed and allowed", PermissionGranted, "d1", PushOn},
		{"a credential the server no longer lists", PermissionGranted, "gone", PushOff},
		{"listed, permission reset to ask", PermissionDefault, "d1", PushOff},
		{"no credential", PermissionGranted, "", PushOff},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := pushOf(t, PushSupported, tt.perm, tt.deviceID, device("d1", "Chrome on Linux"), device("d2", "Firefox on Android"))
			assert.Equal(t, tt.phase, p.Phase())
			if tt.phase == PushOn {
				d, ok := p.ThisDevice()
				require.True(t, ok)
				assert.Equal(t, "Chrome on Linux", d.Name)
				assert.Equal(t, []shared.PushDevice{device("d2", "Firefox on Android")}, p.OtherDevices())
			}
		})
	}
}

func TestTurningOnNeedsTheServersKey(t *testing.T) {
	var p Push
	p.Select("w1")
	n, _ := p.Begin(PushLoading)
	p.Checked(n, PushSupported, PermissionDefault, "")
	p.Done(n, "push.config.get: unavailable", "")
	assert.Equal(t, PushOff, p.Phase())
	assert.False(t, p.CanTurnOn(), "subscribing needs the application server key")
	assert.Equal(t, "push.config.get: unavailable", p.Err())
}

func TestOneOperationAtATime(t *testing.T) {
	p := pushOf(t, PushSupported, PermissionDefault, "")
	n, ok := p.Begin(PushTurningOn)
	require.True(t, ok)
	assert.False(t, p.CanTurnOn(), "a second click does not subscribe twice")
	_, again := p.Begin(PushRemoving)
	assert.False(t, again)
	assert.Equal(t, PushTurningOn, p.Op())

	p.Done(n, "", "")
	_, ok = p.Begin(PushRemoving)
	assert.True(t, ok)
}

func TestBeginClearsTheLastOutcome(t *testing.T) {
	p := pushOf(t, PushSupported, PermissionGranted, "")
	n, _ := p.Begin(PushTesting)
	p.Done(n, "", "Sent.")
	assert.Equal(t, "Sent.", p.Notice())
	n, _ = p.Begin(PushTesting)
	assert.Empty(t, p.Notice())
	p.Done(n, "unavailable", "")
	assert.Equal(t, "unavailable", p.Err())
	assert.Empty(t, p.Notice())
}

func TestSubscribingMakesTheDeviceThisBrowsers(t *testing.T) {
	old := device("d1", "Old name")
	p := pushOf(t, PushSupported, PermissionDefault, "", old, device("d2", "Phone"))
	n, _ := p.Begin(PushTurningOn)
	p.Permitted(n, PermissionGranted)
	renamed := device("d1", "Chrome on Linux")
	p.Subscribed(n, renamed)
	p.Done(n, "", "")

	assert.Equal(t, PushOn, p.Phase())
	d, _ := p.ThisDevice()
	assert.Equal(t, "Chrome on Linux", d.Name, "the same endpoint is the same device, replaced")
	assert.Equal(t, []shared.PushDevice{device("d2", "Phone")}, p.OtherDevices())
}

func TestRemovingThisBrowsersDeviceTurnsItOff(t *testing.T) {
	p := pushOf(t, PushSupported, PermissionGranted, "d1", device("d1", "Here"), device("d2", "Phone"))
	n, _ := p.Begin(PushTurningOff)
	p.Removed(n, "d1")
	p.Done(n, "", "")
	assert.Equal(t, PushOff, p.Phase())
	assert.Equal(t, []shared.PushDevice{device("d2", "Phone")}, p.OtherDevices())

	n, _ = p.Begin(PushRemoving)
	p.Removed(n, "d2")
	assert.Empty(t, p.OtherDevices())
}

func TestAnswersForAnotherWorkspaceAreDropped(t *testing.T) {
	p := pushOf(t, PushSupported, PermissionGranted, "d1", device("d1", "Here"))
	n, _ := p.Begin(PushTurningOff)

	p.Select("w2")
	assert.Equal(t, PushChecking, p.Phase(), "another workspace's panel starts afresh")
	assert.Equal(t, PushIdle, p.Op(), "and is not busy with w1's operation")
	p.Removed(n, "d1")
	p.Checked(n, PushSupported, PermissionGranted, "d1")
	p.Listed(n, []shared.PushDevice{device("d1", "Here")})
	p.Subscribed(n, device("d9", "Late"))
	p.Done(n, "late failure", "")
	assert.Equal(t, PushChecking, p.Phase())
	assert.Empty(t, p.OtherDevices())
	assert.Empty(t, p.Err())

	p.Select("w2")
	m, ok := p.Begin(PushLoading)
	require.True(t, ok)
	assert.NotEqual(t, n, m)
}

func TestSelectingTheSameWorkspaceKeepsItsState(t *testing.T) {
	p := pushOf(t, PushSupported, PermissionGranted, "d1", device("d1", "Here"))
	p.Select("w1")
	assert.Equal(t, PushOn, p.Phase())
}

func TestATogglesUpdateCarriesEveryPreference(t *testing.T) {
	here := device("d1", "Here")
	here.Preferences = shared.PushPreferences{Requests: true, Turns: true}
	p := pushOf(t, PushSupported, PermissionGranted, "d1", here)

	req, ok := p.Toggle(PreferErrors, true)
	require.True(t, ok)
	assert.Equal(t, "d1", req.DeviceID)
	require.NotNil(t, req.Preferences)
	assert.Equal(t, shared.PushPreferences{Requests: true, Errors: true, Turns: true}, *req.Preferences,
		"the others stay as they are")
	assert.Nil(t, req.Name)

	req, ok = p.Toggle(PreferRequests, false)
	require.True(t, ok)
	assert.Equal(t, shared.PushPreferences{Turns: true}, *req.Preferences)

	_, ok = p.Toggle(PreferTurns, true)
	assert.False(t, ok, "nothing to change")

	stored := here
	stored.Preferences = shared.PushPreferences{Requests: true, Turns: true, PullRequests: true}
	n, _ := p.Begin(PushSaving)
	p.Updated(n, stored)
	p.Done(n, "", "")
	for _, pref := range PushPreferences {
		d, _ := p.ThisDevice()
		assert.Equal(t, pref != PreferErrors, pref.In(d.Preferences), pref)
	}
}

func TestAToggleNeedsThisBrowsersDevice(t *testing.T) {
	p := pushOf(t, PushSupported, PermissionGranted, "", device("d2", "Phone"))
	_, ok := p.Toggle(PreferErrors, true)
	assert.False(t, ok, "another device's preferences are its own to change")
}

func TestEveryPreferenceHasALabel(t *testing.T) {
	seen := map[string]bool{}
	for _, pref := range PushPreferences {
		label := pref.Label()
		assert.NotEqual(t, string(pref), label)
		assert.False(t, seen[label], label)
		seen[label] = true
		on := pref.with(shared.PushPreferences{}, true)
		assert.True(t, pref.In(on))
		assert.Equal(t, 1, countOn(on), "%s sets only itself", pref)
	}
}

func countOn(p shared.PushPreferences) int {
	n := 0
	for _, b := range []bool{p.Requests, p.Errors, p.Turns, p.PullRequests} {
		if b {
			n++
		}
	}
	return n
}

func TestADevicesDefaultNameSaysBrowserAndSystem(t *testing.T) {
	tests := []struct {
		name     string
		brands   []string
		platform string
		ua       string
		want     string
	}{
		{"Chromium's client hints", []string{"Not)A;Brand", "Chromium"}, "Linux", "", "Chromium on Linux"},
		{"Chrome lists Chromium too", []string{"Chromium", "Google Chrome", "Not-A.Brand"}, "Android", "", "Chrome on Android"},
		{"Edge", []string{"Chromium", "Microsoft Edge"}, "Windows", "", "Microsoft Edge on Windows"},
		{"headless", []string{"HeadlessChrome", "Chromium"}, "Linux", "", "HeadlessChrome on Linux"},
		{"Firefox on Android", nil, "", "Mozilla/5.0 (Android 14; Mobile; rv:128.0) Gecko/128.0 Firefox/128.0", "Firefox on Android"},
		{"Safari on an iPhone", nil, "", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1", "Safari on iPhone"},
		{"Safari on a Mac", nil, "", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15", "Safari on macOS"},
		{"Edge by its user agent", nil, "", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.0.0", "Edge on Windows"},
		{"unknown browser, known system", nil, "", "Something (X11; Linux x86_64)", "A browser on Linux"},
		{"nothing known", nil, "", "", "This device"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, DeviceName(tt.brands, tt.platform, tt.ua))
		})
	}
}

func TestADevicesDefaultNameFitsTheBound(t *testing.T) {
	name := DeviceName([]string{"Chromium"}, strings.Repeat("Ω", 60), "")
	assert.LessOrEqual(t, len(name), shared.MaxDeviceNameBytes)
	assert.True(t, strings.HasPrefix(name, "Chromium on Ω"))
}

func TestAnUpdateAnswerWithoutADeviceChangesNothing(t *testing.T) {
	p := pushOf(t, PushSupported, PermissionGranted, "d1", device("d1", "Here"))
	n, _ := p.Begin(PushSaving)
	p.Updated(n, shared.PushDevice{})
	p.Done(n, "", "")
	assert.Empty(t, p.OtherDevices(), "no nameless device appears")
	d, _ := p.ThisDevice()
	assert.Equal(t, "Here", d.Name)
}
