// worker_harness runs the service worker that webui serves in a node vm,
// with the browser's service worker APIs replaced by recorders, and plays
// the scenario read from stdin: {devices, windows, fetch, notifications,
// steps}. It prints what the worker did as JSON: notifications shown and
// closed, requests made, badges set, windows focused, messaged or opened,
// devices saved, and what each called handleNotificationAction resolved to.
"use strict";
const fs = require("node:fs");
const vm = require("node:vm");

const [workerPath] = process.argv.slice(2);
const scenario = JSON.parse(fs.readFileSync(0, "utf8"));
const origin = "https://herd.test";

const log = { shown: [], closed: [], fetches: [], badges: [], focused: 0, messages: [], opened: [], saved: [], subscribed: [], imported: [], outcomes: [] };

const open = [];
class FakeNotification {
  constructor(title, options) {
    Object.assign(this, { title, body: "", tag: "", data: null }, options);
  }
  close() {
    const i = open.indexOf(this);
    if (i >= 0) open.splice(i, 1);
    log.closed.push(this.tag);
  }
}
for (const n of scenario.notifications || []) open.push(new FakeNotification(n.title, n));

const devices = new Map(Object.entries(scenario.devices || {}));
const responses = [...(scenario.fetch || [])];
const windows = (scenario.windows || []).map((w) => ({
  ...w,
  focus: async () => {
    log.focused++;
  },
  postMessage: (m) => log.messages.push(m),
}));

const sandbox = {
  console: { log() {}, warn() {}, error() {} },
  URL,
  AbortSignal,
  setTimeout,
  clearTimeout,
  caches: {},
  importScripts: (...paths) => {
    log.imported.push(...paths);
    // push.js's herdDevices, over a map instead of IndexedDB.
    sandbox.self.herdDevices = {
      load: async (ws) => devices.get(ws) || null,
      save: async (ws, d) => {
        devices.set(ws, d);
        log.saved.push({ workspace_id: ws, ...d });
      },
      entries: async () => [...devices].map(([ws, d]) => ({ workspace_id: ws, ...d })),
    };
  },
  fetch: async (url, init) => {
    log.fetches.push({
      url,
      method: init.method,
      headers: init.headers,
      body: JSON.parse(init.body),
      credentials: init.credentials,
      bounded: init.signal instanceof AbortSignal,
    });
    const next = responses.shift() || { status: 200 };
    if (next.error) throw new TypeError("Failed to fetch");
    return {
      status: next.status,
      ok: next.status >= 200 && next.status < 300,
      json: async () => next.json || {},
    };
  },
  registration: {
    showNotification: async (title, options) => {
      if (options.renotify && !options.tag) throw new TypeError("renotify requires a tag");
      for (const n of open.filter((n) => n.tag === options.tag)) open.splice(open.indexOf(n), 1);
      open.push(new FakeNotification(title, options));
      log.shown.push({ title, ...options });
    },
    getNotifications: async (filter) => open.filter((n) => !filter || !filter.tag || n.tag === filter.tag),
    pushManager: {
      subscribe: async (options) => {
        log.subscribed.push({ userVisibleOnly: options.userVisibleOnly, key: [...new Uint8Array(options.applicationServerKey)] });
        return subscription(scenario.renewed);
      },
    },
  },
  location: new URL(origin + "/app-worker.js"),
  clients: {
    matchAll: async () => windows,
    openWindow: async (url) => {
      log.opened.push(url);
    },
  },
  navigator: {
    setAppBadge: async (n) => log.badges.push(n),
    clearAppBadge: async () => log.badges.push(0),
  },
};
sandbox.self = sandbox;
const listeners = {};
sandbox.addEventListener = (type, fn) => {
  listeners[type] = fn;
};
vm.createContext(sandbox);
vm.runInContext(fs.readFileSync(workerPath, "utf8"), sandbox, { filename: "app-worker.js" });

function subscription(s) {
  return { options: { applicationServerKey: new Uint8Array(s.key).buffer }, toJSON: () => ({ endpoint: s.endpoint, keys: s.keys }) };
}

// fire dispatches an event and waits for what it handed to waitUntil.
async function fire(type, event) {
  const pending = [];
  listeners[type]({ ...event, waitUntil: (p) => pending.push(p) });
  await Promise.all(pending);
}

function pushData(raw) {
  if (raw === null || raw === undefined) return null;
  return { text: () => raw, json: () => JSON.parse(raw) };
}

function notificationTagged(tag) {
  const n = open.find((n) => n.tag === tag);
  if (!n) throw new Error("no open notification tagged " + tag);
  return n;
}

(async () => {
  for (const step of scenario.steps) {
    if ("push" in step) await fire("push", { data: pushData(step.push) });
    if (step.click) await fire("notificationclick", { notification: notificationTagged(step.click.tag), action: step.click.action || "" });
    if (step.call) log.outcomes.push(await sandbox.handleNotificationAction(notificationTagged(step.call.tag), step.call.action));
    if (step.renew) {
      const old = step.renew.old ? subscription(step.renew.old) : null;
      const renewed = step.renew.new ? subscription(step.renew.new) : null;
      await fire("pushsubscriptionchange", { oldSubscription: old, newSubscription: renewed });
    }
  }
  log.open = open.map((n) => ({ title: n.title, tag: n.tag }));
  process.stdout.write(JSON.stringify(log));
})().catch((err) => {
  process.stderr.write(String(err && err.stack ? err.stack : err));
  process.exit(1);
});
