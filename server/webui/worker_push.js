// -----------------------------------------------------------------------------
// herd: notifications (server/webui/worker_push.js, in place of go-app's)
// -----------------------------------------------------------------------------
// herdDevices: the device credentials of each workspace (web/static/push.js).
importScripts("/web/push.js");

const herdIcon = "/web/icon-192.png";
const herdDecisionPath = "/api/v1/push/decision";
const herdResubscribePath = "/api/v1/push/resubscribe";
// herdFallbackTag names a notification whose message had no tag: a tag is
// what lets a later message replace or close it.
const herdFallbackTag = "herd";
// herdPostTimeoutMs bounds a decision's request, so a hung server turns
// into "could not answer" instead of a notification that never reacts.
const herdPostTimeoutMs = 15000;
// herdQuietKinds are left unshown while the person is looking at herd:
// the page already shows them. Requests and tests are always shown.
const herdQuietKinds = ["turn", "error", "pull_request"];

self.addEventListener("push", (event) => {
  event.waitUntil(handlePush(event.data));
});

self.addEventListener("notificationclick", (event) => {
  const notification = event.notification;
  if (event.action && notification.data && notification.data.kind === "permission") {
    event.waitUntil(handleNotificationAction(notification, event.action));
    return;
  }
  notification.close();
  event.waitUntil(openApp(notification.data && notification.data.url));
});

self.addEventListener("pushsubscriptionchange", (event) => {
  event.waitUntil(renewSubscription(event.oldSubscription, event.newSubscription));
});

// readPushMessage returns the push's shared.PushMessage, or null when the
// push carries none (no data, not JSON, no kind).
function readPushMessage(data) {
  if (!data) return null;
  let msg;
  try {
    msg = data.json();
  } catch (err) {
    return null;
  }
  if (!msg || typeof msg !== "object" || typeof msg.kind !== "string") return null;
  return msg;
}

function herdText(value, fallback) {
  return typeof value === "string" && value !== "" ? value : fallback;
}

async function handlePush(data) {
  const msg = readPushMessage(data);
  if (!msg) {
    // Browsers require every push to show a notification (and may drop the
    // subscription of a site that does not): one herd cannot read still says
    // that something waits.
    return self.registration.showNotification("herd needs you", {
      body: "Open herd to see what is waiting.",
      tag: herdFallbackTag,
      icon: herdIcon,
      badge: herdIcon,
      data: { url: "/" },
    });
  }
  await updateBadge(msg.pending);
  const tag = herdText(msg.tag, herdFallbackTag);
  if (msg.kind === "close") {
    for (const notification of await self.registration.getNotifications({ tag })) {
      notification.close();
    }
    return;
  }
  if (herdQuietKinds.includes(msg.kind) && (await herdInView())) {
    // Not shown while herd is in view, but it still stands for the task's
    // notification: one of a request already answered must not stay.
    for (const notification of await self.registration.getNotifications({ tag })) {
      notification.close();
    }
    return;
  }
  return self.registration.showNotification(herdText(msg.title, "herd"), notificationOptions(msg, tag));
}

// notificationOptions shows a message: a request stays until it is acted
// on, and a permission request's options are its buttons.
function notificationOptions(msg, tag) {
  const request = msg.kind === "permission" || msg.kind === "clarification";
  const options = {
    body: herdText(msg.body, ""),
    tag,
    // The same task's notification replaced by a newer one alerts again.
    renotify: true,
    requireInteraction: request,
    icon: herdIcon,
    badge: herdIcon,
    data: msg,
  };
  if (msg.kind === "permission" && Array.isArray(msg.actions)) {
    options.actions = msg.actions
      .filter((a) => a && typeof a.option_id === "string" && a.option_id !== "" && typeof a.label === "string")
      .map((a) => ({ action: a.option_id, title: a.label }));
  }
  const sent = Date.parse(msg.sent_at);
  if (!Number.isNaN(sent)) options.timestamp = sent;
  return options;
}

// updateBadge shows the workspace's open requests on the app's icon. A
// badge is a hint: failing to set one never fails the push.
async function updateBadge(pending) {
  if (!("setAppBadge" in self.navigator) || !Number.isInteger(pending) || pending < 0) return;
  try {
    if (pending > 0) await self.navigator.setAppBadge(pending);
    else await self.navigator.clearAppBadge();
  } catch (err) {
    console.warn("herd: app badge:", err);
  }
}

// herdInView reports whether a herd window is focused and visible.
async function herdInView() {
  const windows = await self.clients.matchAll({ type: "window" });
  return windows.some((w) => w.focused && w.visibilityState === "visible");
}

// handleNotificationAction answers a permission request from a button of
// its notification (action is the option id) and resolves with what
// happened: "answered", "already answered" or "failed". Browser tests call
// it through the DevTools protocol on the worker's target, since no
// DevTools command clicks a notification's button.
async function handleNotificationAction(notification, action) {
  const msg = notification.data || {};
  const tag = notification.tag || herdFallbackTag;
  const status = await postDecision(msg, action);
  notification.close();
  if (status === 200) return "answered";
  if (status === 404 || status === 409) {
    await self.registration.showNotification("Already answered", {
      body: herdText(msg.title, ""),
      tag,
      icon: herdIcon,
      badge: herdIcon,
      data: { kind: "answered", url: msg.url },
    });
    return "already answered";
  }
  await self.registration.showNotification("Could not answer", {
    body: herdText(msg.title, "The request") + ": tap to open the task and answer there.",
    tag,
    icon: herdIcon,
    badge: herdIcon,
    data: { kind: "failed", url: msg.url },
  });
  return "failed";
}

// postDecision posts a decision with the workspace's device credential and
// answers the HTTP status, 0 when there was no answer (offline, timeout)
// and 401 when this browser holds no credential for the workspace.
async function postDecision(msg, optionId) {
  try {
    const device = await self.herdDevices.load(String(msg.workspace_id));
    if (!device || !device.credential) return 401;
    const response = await fetch(herdDecisionPath, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: "HerdDevice " + device.credential },
      body: JSON.stringify({
        workspace_id: msg.workspace_id,
        session_id: msg.session_id,
        pending_id: msg.pending_id,
        option_id: optionId,
      }),
      // The device credential is the whole authority; the page's cookie
      // is not needed, and may have expired while the phone was locked.
      credentials: "omit",
      signal: AbortSignal.timeout(herdPostTimeoutMs),
    });
    return response.status;
  } catch (err) {
    console.warn("herd: decision:", err);
    return 0;
  }
}

// openApp shows the app at path, which must be of this origin (a push
// cannot send the app elsewhere). An open window is reused: go-app's page
// navigates in place on a "notification" message (goappNav), keeping the
// running app and its connection, where client.navigate would load it anew.
async function openApp(path) {
  let url = new URL("/", self.location.origin);
  try {
    const candidate = new URL(herdText(path, "/"), self.location.origin);
    if (candidate.origin === self.location.origin) url = candidate;
  } catch (err) {
    // A malformed address opens the app's root.
  }
  // Only a window this worker controls runs the app that takes the
  // navigation message (an uncontrolled one may be the login page).
  const windows = await self.clients.matchAll({ type: "window" });
  const win = windows.find((w) => w.focused) || windows[0];
  if (!win) return self.clients.openWindow(url.href);
  try {
    await win.focus();
  } catch (err) {
    console.warn("herd: focus:", err);
  }
  win.postMessage({ goapp: { type: "notification", path: url.pathname + url.search + url.hash } });
}

// renewSubscription registers the browser's new subscription for every
// workspace device it serves, when the push service replaced it. A browser
// that gives no new subscription is asked for one with the old key.
async function renewSubscription(oldSubscription, newSubscription) {
  let subscription = newSubscription;
  if (!subscription) {
    const key = oldSubscription && oldSubscription.options && oldSubscription.options.applicationServerKey;
    if (!key) return;
    subscription = await self.registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
  }
  const { endpoint, keys } = subscription.toJSON();
  for (const device of await self.herdDevices.entries()) {
    try {
      const response = await fetch(herdResubscribePath, {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: "HerdDevice " + device.credential },
        body: JSON.stringify({ endpoint, keys }),
        credentials: "omit",
        signal: AbortSignal.timeout(herdPostTimeoutMs),
      });
      if (!response.ok) {
        console.warn("herd: resubscribe answered", response.status);
        continue;
      }
      const answer = await response.json();
      if (answer && typeof answer.credential === "string" && answer.credential !== "") {
        const id = answer.device && answer.device.id ? answer.device.id : device.device_id;
        await self.herdDevices.save(device.workspace_id, { device_id: id, credential: answer.credential });
      }
    } catch (err) {
      console.warn("herd: resubscribe:", err);
    }
  }
}
