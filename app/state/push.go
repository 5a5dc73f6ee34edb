package state

import (
	"strings"

	"github.com/herd-dev/herd/shared"
)

// PushSupport names what keeps this browser from Web Push, as push.js's
// herdPush.support() reports it.
type PushSupport string

// What a browser can lack for Web Push.
const (
	PushSupported       PushSupport = ""
	PushInsecure        PushSupport = "insecure"
	PushNoServiceWorker PushSupport = "no-service-worker"
	PushNoPushManager   PushSupport = "no-push"
	PushNoNotification  PushSupport = "no-notification"
)

// PushPermission is the browser's Notification.permission.
type PushPermission string

// The notification permissions.
const (
	PermissionDefault PushPermission = "default"
	PermissionGranted PushPermission = "granted"
	PermissionDenied  PushPermission = "denied"
)

// PushPhase is what the "Notifications on this device" panel offers.
type PushPhase int

// The panel's phases.
const (
	// PushChecking: the browser has not been asked yet.
	PushChecking PushPhase = iota
	// PushUnsupported: the browser cannot take Web Push (PushNotices.Why).
	PushUnsupported
	// PushBlocked: the person denied notifications to the site.
	PushBlocked
	// PushOff: the browser can, but is no device of the workspace.
	PushOff
	// PushOn: this browser is a device of the workspace and may notify.
	PushOn
)

// PushOp is the panel's operation in flight; one at a time, so that two
// clicks cannot subscribe twice or remove a device being subscribed.
type PushOp int

// The panel's operations.
const (
	PushIdle PushOp = iota
	PushLoading
	PushTurningOn
	PushSaving
	PushTesting
	PushTurningOff
	PushRemoving
)

// PushPreference is one thing a device may be notified of.
type PushPreference string

// The preferences, as shared.PushPreferences names them.
const (
	PreferRequests     PushPreference = "requests"
	PreferErrors       PushPreference = "errors"
	PreferTurns        PushPreference = "turns"
	PreferPullRequests PushPreference = "pull_requests"
)

// PushPreferences lists the preferences in the order the panel shows them.
var PushPreferences = []PushPreference{PreferRequests, PreferErrors, PreferTurns, PreferPullRequests}

// Label is what the panel calls p.
func (p PushPreference) Label() string {
	switch p {
	case PreferRequests:
		return "Permission and clarification requests"
	case PreferErrors:
		return "Agent errors"
	case PreferTurns:
		return "Finished turns"
	case PreferPullRequests:
		return "Pull requests turning red or green"
	}
	return string(p)
}

// In reports whether prefs take p.
func (p PushPreference) In(prefs shared.PushPreferences) bool {
	switch p {
	case PreferRequests:
		return prefs.Requests
	case PreferErrors:
		return prefs.Errors
	case PreferTurns:
		return prefs.Turns
	case PreferPullRequests:
		return prefs.PullRequests
	}
	return false
}

// with returns prefs with p set to on.
func (p PushPreference) with(prefs shared.PushPreferences, on bool) shared.PushPreferences {
	switch p {
	case PreferRequests:
		prefs.Requests = on
	case PreferErrors:
		prefs.Errors = on
	case PreferTurns:
		prefs.Turns = on
	case PreferPullRequests:
		prefs.PullRequests = on
	}
	return prefs
}

// Push is the state of the "Notifications on this device" panel for one
// workspace: what the browser can do, this browser's device (the one it
// holds a credential for) and the workspace's other devices, and the one
// operation in flight. Answers carry the ticket Begin gave; an answer
// whose ticket is no longer current (another workspace was shown since)
// is dropped.
type Push struct {
	workspaceID string
	ticket      int
	checked     bool
	support     PushSupport
	permission  PushPermission
	// publicKey is the server's VAPID key; empty until push.config.get
	// answered.
	publicKey string
	// deviceID is the device this browser keeps a credential for; it is
	// this browser's only while the server lists it too.
	deviceID string
	devices  []shared.PushDevice
	op       PushOp
	err      string
	notice   string
}

// Select makes p the state of workspaceID's panel: unchanged when it is
// already, else a fresh state whose ticket outdates every answer still on
// its way for the workspace before.
func (p *Push) Select(workspaceID string) {
	if p.workspaceID == workspaceID {
		return
	}
	*p = Push{workspaceID: workspaceID, ticket: p.ticket + 1}
}

// WorkspaceID is the workspace the state is of.
func (p *Push) WorkspaceID() string { return p.workspaceID }

// Begin starts op and returns its ticket, or false while another
// operation is in flight.
func (p *Push) Begin(op PushOp) (int, bool) {
	if p.op != PushIdle {
		return 0, false
	}
	p.op, p.err, p.notice = op, "", ""
	return p.ticket, true
}

// Current reports whether an answer with ticket still belongs here.
func (p *Push) Current(ticket int) bool { return ticket == p.ticket }

// Done ends the operation of ticket with an error to show (empty for
// none) or a notice.
func (p *Push) Done(ticket int, err, notice string) {
	if !p.Current(ticket) {
		return
	}
	p.op, p.err, p.notice = PushIdle, err, notice
}

// Checked records what the browser reported: its support, its permission
// and the device it holds a credential for ("" for none).
func (p *Push) Checked(ticket int, support PushSupport, permission PushPermission, deviceID string) {
	if !p.Current(ticket) {
		return
	}
	p.checked, p.support, p.permission, p.deviceID = true, support, permission, deviceID
}

// Permitted records the permission the person just gave or refused.
func (p *Push) Permitted(ticket int, permission PushPermission) {
	if p.Current(ticket) {
		p.permission = permission
	}
}

// Configured records the server's VAPID public key.
func (p *Push) Configured(ticket int, publicKey string) {
	if p.Current(ticket) {
		p.publicKey = publicKey
	}
}

// PublicKey is the server's VAPID public key, empty while unknown.
func (p *Push) PublicKey() string { return p.publicKey }

// Listed records the workspace's devices.
func (p *Push) Listed(ticket int, devices []shared.PushDevice) {
	if p.Current(ticket) {
		p.devices = append([]shared.PushDevice(nil), devices...)
	}
}

// Subscribed records this browser's registration: the device becomes this
// browser's, replacing its earlier copy in the list. An answer without a
// device id changes nothing.
func (p *Push) Subscribed(ticket int, device shared.PushDevice) {
	if !p.Current(ticket) || device.ID == "" {
		return
	}
	p.deviceID = device.ID
	p.upsert(device)
}

// Updated records a device as the server stored it; an answer without a
// device id changes nothing.
func (p *Push) Updated(ticket int, device shared.PushDevice) {
	if p.Current(ticket) && device.ID != "" {
		p.upsert(device)
	}
}

func (p *Push) upsert(device shared.PushDevice) {
	for i := range p.devices {
		if p.devices[i].ID == device.ID {
			p.devices = append([]shared.PushDevice(nil), p.devices...)
			p.devices[i] = device
			return
		}
	}
	p.devices = append(append([]shared.PushDevice(nil), p.devices...), device)
}

// Removed drops a device; when it was this browser's, this browser is
// off.
func (p *Push) Removed(ticket int, deviceID string) {
	if !p.Current(ticket) {
		return
	}
	kept := make([]shared.PushDevice, 0, len(p.devices))
	for _, d := range p.devices {
		if d.ID != deviceID {
			kept = append(kept, d)
		}
	}
	p.devices = kept
	if p.deviceID == deviceID {
		p.deviceID = ""
	}
}

// Phase is what the panel offers now.
func (p *Push) Phase() PushPhase {
	switch {
	case !p.checked:
		return PushChecking
	case p.support != PushSupported:
		return PushUnsupported
	case p.permission == PermissionDenied:
		return PushBlocked
	}
	if _, ok := p.ThisDevice(); ok && p.permission == PermissionGranted {
		return PushOn
	}
	return PushOff
}

// Why says, in plain words, why the browser cannot be notified and what
// to do about it; empty while it can.
func (p *Push) Why() string {
	switch p.Phase() {
	case PushUnsupported:
		switch p.support {
		case PushInsecure:
			return "Browsers deliver notifications only to a secure page: open herd over HTTPS, or at localhost on this computer."
		case PushNoServiceWorker:
			return "This browser runs no service worker for herd here (private windows often turn them off), so it cannot receive notifications."
		case PushNoPushManager:
			return "This browser has no Web Push here. On an iPhone or iPad, add herd to the Home Screen (Share, then Add to Home Screen) and open it from there."
		default:
			return "This browser cannot show notifications."
		}
	case PushBlocked:
		return "Notifications are blocked for this site. To undo it, open the site's settings (the icon left of the address), allow Notifications, then open this panel again."
	}
	return ""
}

// Op is the operation in flight, PushIdle for none.
func (p *Push) Op() PushOp { return p.op }

// Err is why the last operation failed, empty if it did not.
func (p *Push) Err() string { return p.err }

// Notice is what the last operation wants said, such as a test sent.
func (p *Push) Notice() string { return p.notice }

// CanTurnOn reports whether "Turn on notifications" can start: the
// browser can, nothing is in flight and the server's key is known.
func (p *Push) CanTurnOn() bool {
	return p.Phase() == PushOff && p.op == PushIdle && p.publicKey != ""
}

// ThisDevice returns this browser's device, while the server lists it.
func (p *Push) ThisDevice() (shared.PushDevice, bool) {
	if p.deviceID == "" {
		return shared.PushDevice{}, false
	}
	for _, d := range p.devices {
		if d.ID == p.deviceID {
			return d, true
		}
	}
	return shared.PushDevice{}, false
}

// OtherDevices are the workspace's devices besides this browser's, oldest
// first.
func (p *Push) OtherDevices() []shared.PushDevice {
	others := make([]shared.PushDevice, 0, len(p.devices))
	for _, d := range p.devices {
		if d.ID != p.deviceID {
			others = append(others, d)
		}
	}
	return others
}

// Toggle returns the update that sets preference pref of this browser's
// device to on, or false when there is no device or nothing to change.
func (p *Push) Toggle(pref PushPreference, on bool) (shared.PushDeviceUpdateRequest, bool) {
	d, ok := p.ThisDevice()
	if !ok || pref.In(d.Preferences) == on {
		return shared.PushDeviceUpdateRequest{}, false
	}
	prefs := pref.with(d.Preferences, on)
	return shared.PushDeviceUpdateRequest{DeviceID: d.ID, Preferences: &prefs}, true
}

// DeviceName is the default name of this browser as a device, such as
// "Chrome on Android", from navigator.userAgentData's brands and platform
// when the browser has them, else from its user agent string. It is at
// most shared.MaxDeviceNameBytes.
func DeviceName(brands []string, platform, userAgent string) string {
	browser := browserOf(brands, userAgent)
	system := platformOf(platform, userAgent)
	var name string
	switch {
	case browser != "" && system != "":
		name = browser + " on " + system
	case browser != "":
		name = browser
	case system != "":
		name = "A browser on " + system
	default:
		name = "This device"
	}
	return shared.Clip(name, shared.MaxDeviceNameBytes)
}

// browserOf names the browser: a brand of userAgentData's, the most
// specific first (Chromium's derivatives list "Chromium" too), else the
// user agent's product.
func browserOf(brands []string, ua string) string {
	for _, want := range []string{"Microsoft Edge", "Opera", "Brave", "Google Chrome", "HeadlessChrome", "Chromium"} {
		for _, b := range brands {
			if b == want {
				return strings.TrimPrefix(want, "Google ")
			}
		}
	}
	// The order matters: Edge and Opera say Chrome, Chrome says Safari.
	for _, p := range []struct{ token, name string }{
		{"Edg/", "Edge"}, {"EdgA/", "Edge"}, {"OPR/", "Opera"}, {"Firefox/", "Firefox"}, {"FxiOS/", "Firefox"},
		{"SamsungBrowser/", "Samsung Internet"}, {"CriOS/", "Chrome"}, {"HeadlessChrome/", "HeadlessChrome"},
		{"Chrome/", "Chrome"}, {"Chromium/", "Chromium"}, {"Safari/", "Safari"},
	} {
		if strings.Contains(ua, p.token) {
			return p.name
		}
	}
	return ""
}

// platformOf names the operating system.
func platformOf(platform, ua string) string {
	if platform != "" {
		return platform
	}
	for _, p := range []struct{ token, name string }{
		{"iPhone", "iPhone"}, {"iPad", "iPad"}, {"Android", "Android"}, {"CrOS", "ChromeOS"},
		{"Mac OS X", "macOS"}, {"Windows", "Windows"}, {"Linux", "Linux"},
	} {
		if strings.Contains(ua, p.token) {
			return p.name
		}
	}
	return ""
}
