package ui

import (
	"encoding/json"
	"errors"

	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// errNoBridge is what a push call answers when web/static/push.js did not
// load (an old cached page, a blocked script).
var errNoBridge = errors.New("the page's push script did not load; reload the page")

// pushCall calls push.js's herdPush.method and returns its promise. A
// call that must run inside the click that asked for it (the permission
// request) is made in the event handler itself; awaitJS waits for it
// later.
func pushCall(method string, args ...any) (app.Value, error) {
	bridge := app.Window().Get("herdPush")
	if !bridge.Truthy() {
		return nil, errNoBridge
	}
	return bridge.Call(method, args...), nil
}

// awaitPush calls herdPush.method and waits for its answer; see awaitJS.
func awaitPush(method string, args ...any) (app.Value, error) {
	promise, err := pushCall(method, args...)
	if err != nil {
		return nil, err
	}
	return awaitJS(promise)
}

// awaitJS blocks until promise settles and returns its value, or its
// rejection as an error. It runs only on a goroutine of ctx.Async: the
// promise's callbacks come from the browser, never from the UI goroutine,
// which must not block.
func awaitJS(promise app.Value) (app.Value, error) {
	type settled struct {
		value app.Value
		err   error
	}
	done := make(chan settled, 1)
	var then, catch app.Func
	then = app.FuncOf(func(_ app.Value, args []app.Value) any {
		done <- settled{value: firstArg(args)}
		return nil
	})
	catch = app.FuncOf(func(_ app.Value, args []app.Value) any {
		done <- settled{err: jsError(firstArg(args))}
		return nil
	})
	promise.Call("then", then, catch)
	s := <-done
	then.Release()
	catch.Release()
	return s.value, s.err
}

func firstArg(args []app.Value) app.Value {
	if len(args) == 0 {
		return app.Undefined()
	}
	return args[0]
}

// jsError turns a rejection (an Error, a DOMException or anything thrown)
// into an error with its message.
func jsError(v app.Value) error {
	if v.Truthy() {
		if msg := v.Get("message"); msg.Truthy() {
			return errors.New(msg.String())
		}
	}
	return errors.New(app.Window().Get("String").Invoke(v).String())
}

// jsJSON returns v as JSON text; JSON.stringify runs toJSON, so a
// PushSubscription comes out as its endpoint and keys.
func jsJSON(v app.Value) string {
	if v.Type() == app.TypeString {
		return v.String()
	}
	return app.Window().Get("JSON").Call("stringify", v).String()
}

// jsOf returns a Go value as the browser's own object, through JSON.
func jsOf(v any) app.Value {
	b, err := json.Marshal(v)
	if err != nil {
		return app.Null()
	}
	return app.Window().Get("JSON").Call("parse", string(b))
}

// newPromise returns a browser promise settled by run, which goes on a
// goroutine of ctx.Async: it resolves with run's value, or rejects with an
// Error of run's error.
func newPromise(ctx app.Context, run func() (any, error)) app.Value {
	var executor app.Func
	executor = app.FuncOf(func(_ app.Value, args []app.Value) any {
		resolve, reject := args[0], args[1]
		ctx.Async(func() {
			v, err := run()
			if err != nil {
				reject.Invoke(app.Window().Get("Error").New(err.Error()))
			} else {
				resolve.Invoke(v)
			}
			executor.Release()
		})
		return nil
	})
	return app.Window().Get("Promise").New(executor)
}
