package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/app/wsclient"
	"github.com/herd-dev/herd/shared"
)

// Element ids of the notifications panel.
const (
	idNotifyOpen    = "notify-open"
	idNotifyPanel   = "notify-panel"
	idNotifyClose   = "notify-close"
	idNotifyTurnOn  = "notify-turn-on"
	idNotifyTest    = "notify-test"
	idNotifyTurnOff = "notify-turn-off"
)

// pushPanel is the shell's "Notifications on this device" panel: a dialog
// over the page on desktop and phone, opened from the top bar's bell.
type pushPanel struct {
	state state.Push
	open  bool
	// register is window.herdRegisterPush while mounted in the browser.
	register app.Func
}

// renderNotifyButton draws the top bar's bell, which opens the panel.
func (s *shell) renderNotifyButton() app.UI {
	return app.Button().
		ID(idNotifyOpen).
		Class("icon-button", "notify-open").
		Type("button").
		Title("Notifications on this device").
		Aria("label", "Notifications on this device").
		Aria("haspopup", "dialog").
		Aria("expanded", s.push.open).
		Aria("controls", idNotifyPanel).
		OnClick(s.onOpenNotify).
		Body(app.Raw(`<svg class="bell" viewBox="0 0 24 24" width="20" height="20" aria-hidden="true" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round"><path d="M6 9a6 6 0 0 1 12 0c0 6 2.5 8 2.5 8h-17S6 15 6 9"/><path d="M10 20.5a2.2 2.2 0 0 0 4 0"/></svg>`))
}

// renderNotifyLayer draws the open panel over a backdrop. Its slot is
// always there, empty while closed, so that opening it rebuilds nothing
// else (go-app matches children by position); it opens only in the
// browser, so the server never renders its content.
func (s *shell) renderNotifyLayer() app.UI {
	slot := app.Div().Class("notify-slot")
	if !s.push.open {
		return slot
	}
	p := &s.push.state
	return slot.Body(
		app.Div().ID("notify-backdrop").Class("notify-backdrop").Aria("hidden", "true").OnClick(s.onCloseNotify),
		app.Section().
			ID(idNotifyPanel).
			Class("notify-panel").
			Role("dialog").
			Aria("modal", "true").
			Aria("labelledby", "notify-title").
			OnKeyDown(s.onNotifyKey).
			Body(
				app.Div().Class("notify-head").Body(
					app.H2().ID("notify-title").Class("notify-title").Text("Notifications on this device"),
					app.Button().ID(idNotifyClose).Class("icon-button").Type("button").
						Aria("label", "Close notifications").OnClick(s.onCloseNotify).
						Body(app.Span().Class("close-mark").Aria("hidden", "true")),
				),
				s.renderPushStatus(p),
				s.renderPushOutcome(p),
				s.renderOtherDevices(p),
			),
	)
}

// renderPushStatus says what this browser can do and offers the next step:
// why it cannot, "Turn on notifications", or this device's preferences.
func (s *shell) renderPushStatus(p *state.Push) app.UI {
	busy := p.Op() != state.PushIdle
	switch p.Phase() {
	case state.PushChecking:
		return app.P().ID("notify-status").Class("notify-text").Role("status").Text("Checking what this browser can do…")
	case state.PushUnsupported, state.PushBlocked:
		return app.P().ID("notify-status").Class("notify-why").Role("note").Text(p.Why())
	case state.PushOff:
		label := "Turn on notifications"
		if p.Op() == state.PushTurningOn {
			label = "Turning on…"
		}
		return app.Div().ID("notify-status").Class("notify-off").Body(
			app.P().Class("notify-text").Text("Get a notification when an agent asks for permission or has a question, even with herd closed or the phone locked."),
			disabledUnless(app.Button().ID(idNotifyTurnOn).Class("primary-button").Type("button").
				OnClick(s.onTurnOn).Text(label), p.CanTurnOn()),
		)
	}
	d, _ := p.ThisDevice()
	return app.Div().ID("notify-status").Class("notify-on").Body(
		app.P().Class("notify-text").Body(app.Text("On for "), app.Strong().Text(d.Name), app.Text(".")),
		app.FieldSet().Class("notify-prefs").Body(
			app.Legend().Text("Notify this device of"),
			app.Range(state.PushPreferences).Slice(func(i int) app.UI {
				pref := state.PushPreferences[i]
				id := "notify-pref-" + string(pref)
				// Checked is set either way: go-app then sets the box's
				// property, which removing the attribute would not change
				// once the box was clicked. The panel renders only in the
				// browser, so the server never writes checked="false".
				box := app.Input().ID(id).Type("checkbox").Checked(pref.In(d.Preferences)).
					OnChange(s.onTogglePush(pref), app.EventScope(string(pref)))
				if busy {
					box = box.Disabled(true)
				}
				return app.Label().Class("notify-pref").For(id).Body(box, app.Span().Text(pref.Label()))
			}),
		),
		app.Div().Class("notify-actions").Body(
			disabledUnless(app.Button().ID(idNotifyTest).Class("text-button").Type("button").
				OnClick(s.onTestPush).Text("Send a test notification"), !busy),
			disabledUnless(app.Button().ID(idNotifyTurnOff).Class("text-button", "danger").Type("button").
				OnClick(s.onTurnOffPush).Text("Turn off"), !busy),
		),
	)
}

// renderPushOutcome shows why the last operation failed, or its notice.
func (s *shell) renderPushOutcome(p *state.Push) app.UI {
	switch {
	case p.Err() != "":
		return app.P().ID("notify-error").Class("banner", "banner-error").Role("alert").Text(p.Err())
	case p.Notice() != "":
		return app.P().ID("notify-notice").Class("notify-notice").Role("status").Text(p.Notice())
	}
	return nil
}

// renderOtherDevices lists the workspace's other devices, each with a
// remove button.
func (s *shell) renderOtherDevices(p *state.Push) app.UI {
	if p.Phase() == state.PushChecking {
		return nil
	}
	others := p.OtherDevices()
	busy := p.Op() != state.PushIdle
	return app.Div().Class("notify-devices").Body(
		app.H3().ID("notify-devices-title").Class("notify-subtitle").Text("Other devices of this workspace"),
		app.If(len(others) == 0, func() app.UI {
			return app.P().Class("notify-text").Text("No other device of this workspace gets notifications.")
		}).Else(func() app.UI {
			return app.Ul().Class("notify-device-list").Aria("labelledby", "notify-devices-title").Body(
				app.Range(others).Slice(func(i int) app.UI {
					d := others[i]
					return app.Li().Class("notify-device").DataSet("device-id", d.ID).Body(
						app.Div().Class("notify-device-text").Body(
							app.Span().Class("notify-device-name").Text(d.Name),
							app.Span().Class("notify-device-meta").Text(deviceMeta(d)),
						),
						disabledUnless(app.Button().Class("text-button", "danger").Type("button").
							OnClick(s.onRemoveDevice(d.ID), app.EventScope(d.ID)).Body(
							app.Text("Remove"),
							app.Span().Class("visually-hidden").Text(" "+d.Name),
						), !busy),
					)
				}),
			)
		}),
	)
}

// deviceMeta says where a device's notifications go and when herd last
// sent it one.
func deviceMeta(d shared.PushDevice) string {
	meta := d.PushService
	if d.LastSentAt != nil {
		meta += " · last notified " + d.LastSentAt.Local().Format("2 Jan 15:04")
	}
	return meta
}

// disabledUnless disables b unless enabled. A false Disabled is never
// written: the server's HTML would read disabled="false" as disabled.
func disabledUnless(b app.HTMLButton, enabled bool) app.HTMLButton {
	if !enabled {
		return b.Disabled(true)
	}
	return b
}

// onOpenNotify opens the panel and loads what it shows.
func (s *shell) onOpenNotify(ctx app.Context, _ app.Event) {
	s.push.open = true
	focus(ctx, idNotifyClose)
	s.loadPush()
}

// onCloseNotify closes the panel.
func (s *shell) onCloseNotify(ctx app.Context, _ app.Event) { s.closeNotify(ctx) }

// onNotifyKey closes the panel on Escape.
func (s *shell) onNotifyKey(ctx app.Context, e app.Event) {
	if e.Get("key").String() == "Escape" {
		s.closeNotify(ctx)
	}
}

// closeNotify closes the panel and returns focus to the bell.
func (s *shell) closeNotify(ctx app.Context) {
	s.push.open = false
	focus(ctx, idNotifyOpen)
}

// loadPush reads what the browser can do and which device it holds a
// credential for, then the server's key and the workspace's devices.
func (s *shell) loadPush() {
	ws, ok := s.store.Workspace()
	if !ok || s.link == nil {
		return
	}
	p := &s.push.state
	p.Select(ws.ID)
	n, ok := p.Begin(state.PushLoading)
	if !ok {
		return
	}
	ui, client := s.link.ui, s.link.client
	ui.Async(func() {
		support, perm, deviceID, err := readBrowser(ws.ID)
		if err != nil {
			dispatch(ui, func(app.Context) {
				p.Done(n, "This browser's notification settings could not be read: "+err.Error(), "")
			})
			return
		}
		dispatch(ui, func(app.Context) { p.Checked(n, support, perm, deviceID) })
		if support != state.PushSupported {
			dispatch(ui, func(app.Context) { p.Done(n, "", "") })
			return
		}
		var cfg shared.PushConfig
		errConfig := client.Request(context.Background(), shared.ActionPushConfigGet, struct{}{}, &cfg)
		var list shared.PushDeviceListResponse
		errList := client.Request(context.Background(), shared.ActionPushDeviceList, shared.PushDeviceListRequest{WorkspaceID: ws.ID}, &list)
		dispatch(ui, func(app.Context) {
			if errConfig == nil {
				p.Configured(n, cfg.PublicKey)
			}
			if errList == nil {
				p.Listed(n, list.Devices)
			}
			p.Done(n, errText(errors.Join(errConfig, errList)), "")
		})
	})
}

// readBrowser asks push.js what the browser can do, its permission and
// the device it keeps a credential for in workspaceID.
func readBrowser(workspaceID string) (state.PushSupport, state.PushPermission, string, error) {
	support, err := awaitPush("support")
	if err != nil {
		return "", "", "", err
	}
	perm, err := awaitPush("permission")
	if err != nil {
		return "", "", "", err
	}
	if state.PushSupport(support.String()) != state.PushSupported {
		return state.PushSupport(support.String()), state.PushPermission(perm.String()), "", nil
	}
	device, err := awaitPush("loadDevice", workspaceID)
	if err != nil {
		return "", "", "", err
	}
	deviceID := ""
	if device.Truthy() {
		deviceID = device.Get("device_id").String()
	}
	return state.PushSupported, state.PushPermission(perm.String()), deviceID, nil
}

// onTurnOn asks for permission, subscribes at the browser's push service
// and registers the subscription as this browser's device.
func (s *shell) onTurnOn(app.Context, app.Event) {
	p := &s.push.state
	if !p.CanTurnOn() || s.link == nil {
		return
	}
	n, _ := p.Begin(state.PushTurningOn)
	// Browsers show the permission prompt only to the click that asks for
	// it, so it is asked here, before anything waits.
	asked, err := pushCall("requestPermission")
	if err != nil {
		p.Done(n, err.Error(), "")
		return
	}
	ws, key, ui := p.WorkspaceID(), p.PublicKey(), s.link.ui
	ui.Async(func() {
		answer, err := awaitJS(asked)
		if err != nil {
			dispatch(ui, func(app.Context) { p.Done(n, "The browser did not ask for permission: "+err.Error(), "") })
			return
		}
		perm := state.PushPermission(answer.String())
		dispatch(ui, func(app.Context) { p.Permitted(n, perm) })
		if perm != state.PermissionGranted {
			dispatch(ui, func(app.Context) {
				p.Done(n, "", "Notifications were not allowed, so nothing was turned on.")
			})
			return
		}
		sub, err := awaitPush("subscribe", key)
		if err != nil {
			dispatch(ui, func(app.Context) {
				p.Done(n, "This browser could not subscribe at its push service: "+err.Error(), "")
			})
			return
		}
		resp, err := s.registerPush(ws, jsJSON(sub), defaultDeviceName())
		dispatch(ui, func(app.Context) {
			if err != nil {
				p.Done(n, errText(err), "")
				return
			}
			p.Subscribed(n, resp.Device)
			p.Done(n, "", "Turned on. Send a test notification to see that it arrives.")
		})
	})
}

// registerPush registers a push subscription (PushSubscription.toJSON()
// as JSON text) as this browser's device of workspaceID, named name, and
// keeps the credential the server answers with for the service worker. It
// runs on a goroutine of ctx.Async.
func (s *shell) registerPush(workspaceID, subscriptionJSON, name string) (shared.PushSubscribeResponse, error) {
	var req shared.PushSubscribeRequest
	if err := json.Unmarshal([]byte(subscriptionJSON), &req); err != nil || req.Endpoint == "" {
		return shared.PushSubscribeResponse{}, fmt.Errorf("not a push subscription: %s", shared.Clip(subscriptionJSON, 80))
	}
	req.WorkspaceID, req.Name = workspaceID, name
	var resp shared.PushSubscribeResponse
	if err := s.link.client.Request(context.Background(), shared.ActionPushSubscribe, req, &resp); err != nil {
		return resp, err
	}
	device := map[string]string{"device_id": resp.Device.ID, "credential": resp.Credential}
	if _, err := awaitPush("saveDevice", workspaceID, jsOf(device)); err != nil {
		return resp, fmt.Errorf("the device was registered, but its credential could not be kept here (%v); turn on again", err)
	}
	return resp, nil
}

// installPushHook sets window.herdRegisterPush(subscription, name?): it
// registers a subscription (a PushSubscription, its toJSON() or that as
// JSON text) as this browser's device of the shown workspace, keeps the
// credential, and resolves with the device. It is the half of "Turn on
// notifications" after PushManager.subscribe, on its own so that browser
// tests can hand it a subscription of a loopback push service: headless
// Chromium reaches no real push service, so its PushManager.subscribe
// fails.
func (s *shell) installPushHook() {
	ui := s.link.ui
	s.push.register = app.FuncOf(func(_ app.Value, args []app.Value) any {
		sub := jsJSON(firstArg(args))
		name := ""
		if len(args) > 1 && args[1].Type() == app.TypeString {
			name = args[1].String()
		}
		return newPromise(ui, func() (any, error) {
			shown := make(chan string, 1)
			dispatch(ui, func(app.Context) {
				ws, _ := s.store.Workspace()
				shown <- ws.ID
			})
			ws := <-shown
			if ws == "" {
				return nil, errors.New("no workspace is loaded yet")
			}
			if name == "" {
				name = defaultDeviceName()
			}
			resp, err := s.registerPush(ws, sub, name)
			if err != nil {
				return nil, errors.New(errText(err))
			}
			dispatch(ui, func(app.Context) {
				if s.push.open {
					s.loadPush()
				}
			})
			return jsOf(resp.Device), nil
		})
	})
	app.Window().Set("herdRegisterPush", s.push.register)
}

// releasePushHook removes window.herdRegisterPush.
func (s *shell) releasePushHook() {
	app.Window().Delete("herdRegisterPush")
	s.push.register.Release()
}

// defaultDeviceName names this browser from what it says of itself.
func defaultDeviceName() string {
	agent, err := awaitPush("agent")
	if err != nil {
		return state.DeviceName(nil, "", "")
	}
	list := agent.Get("brands")
	brands := make([]string, list.Length())
	for i := range brands {
		brands[i] = list.Index(i).String()
	}
	return state.DeviceName(brands, agent.Get("platform").String(), agent.Get("user_agent").String())
}

// onTogglePush changes one preference of this browser's device.
func (s *shell) onTogglePush(pref state.PushPreference) app.EventHandler {
	return func(ctx app.Context, _ app.Event) {
		box := ctx.JSSrc()
		on := box.Get("checked").Bool()
		p := &s.push.state
		req, ok := p.Toggle(pref, on)
		if !ok || s.link == nil {
			return
		}
		n, ok := p.Begin(state.PushSaving)
		if !ok {
			box.Set("checked", !on)
			return
		}
		ui, client := s.link.ui, s.link.client
		ui.Async(func() {
			var stored shared.PushDevice
			err := client.Request(context.Background(), shared.ActionPushDeviceUpdate, req, &stored)
			dispatch(ui, func(app.Context) {
				if err != nil {
					// The box shows the stored preference again; go-app
					// would not touch it, its rendered value being the same.
					box.Set("checked", !on)
				} else {
					p.Updated(n, stored)
				}
				p.Done(n, errText(err), "")
			})
		})
	}
}

// onTestPush asks the server to send this device a test notification.
func (s *shell) onTestPush(app.Context, app.Event) {
	p := &s.push.state
	d, ok := p.ThisDevice()
	if !ok || s.link == nil {
		return
	}
	n, ok := p.Begin(state.PushTesting)
	if !ok {
		return
	}
	ui, client := s.link.ui, s.link.client
	ui.Async(func() {
		err := client.Request(context.Background(), shared.ActionPushTest, shared.PushDeviceRef{DeviceID: d.ID}, nil)
		dispatch(ui, func(app.Context) {
			p.Done(n, errText(err), "Sent. It shows in a moment; if it does not, check that the system lets this browser show notifications.")
		})
	})
}

// onTurnOffPush removes this browser's device, forgets its credential and,
// when no other workspace's device needs it, drops the subscription.
func (s *shell) onTurnOffPush(app.Context, app.Event) {
	p := &s.push.state
	d, ok := p.ThisDevice()
	if !ok || s.link == nil {
		return
	}
	n, ok := p.Begin(state.PushTurningOff)
	if !ok {
		return
	}
	ws, ui, client := p.WorkspaceID(), s.link.ui, s.link.client
	ui.Async(func() {
		err := client.Request(context.Background(), shared.ActionPushDeviceRemove, shared.PushDeviceRef{DeviceID: d.ID}, nil)
		if err != nil && !isCode(err, shared.CodeNotFound) {
			dispatch(ui, func(app.Context) { p.Done(n, errText(err), "") })
			return
		}
		left, err := awaitPush("forgetDevice", ws)
		if err == nil && left.Int() == 0 {
			_, err = awaitPush("unsubscribe")
		}
		dispatch(ui, func(app.Context) {
			p.Removed(n, d.ID)
			if err != nil {
				p.Done(n, "Turned off for this workspace, but the browser kept its subscription: "+err.Error(), "")
				return
			}
			p.Done(n, "", "Turned off on this device.")
		})
	})
}

// onRemoveDevice removes another device of the workspace.
func (s *shell) onRemoveDevice(id string) app.EventHandler {
	return func(app.Context, app.Event) {
		p := &s.push.state
		if s.link == nil {
			return
		}
		n, ok := p.Begin(state.PushRemoving)
		if !ok {
			return
		}
		ui, client := s.link.ui, s.link.client
		ui.Async(func() {
			err := client.Request(context.Background(), shared.ActionPushDeviceRemove, shared.PushDeviceRef{DeviceID: id}, nil)
			dispatch(ui, func(app.Context) {
				if err == nil || isCode(err, shared.CodeNotFound) {
					p.Removed(n, id)
					err = nil
				}
				p.Done(n, errText(err), "")
			})
		})
	}
}

// isCode reports whether err is the server's coded error code.
func isCode(err error, code shared.Code) bool {
	var coded *shared.Error
	return errors.As(err, &coded) && coded.Code == code
}

// errText says why a request of the panel failed; empty for nil.
func errText(err error) string {
	var coded *shared.Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &coded):
		return coded.Message
	case errors.Is(err, wsclient.ErrNotConnected):
		return "Not connected to the server. Try again once the status shows online."
	case errors.Is(err, wsclient.ErrClosed), errors.Is(err, wsclient.ErrTimeout):
		return "The server did not answer in time. Try again."
	}
	return err.Error()
}
