// herd's bridge to the browser's Web Push APIs. The page loads it (webui
// lists it in the handler's Scripts, so the service worker caches it) and
// the WebAssembly app calls self.herdPush; the service worker imports it
// too (importScripts) for self.herdDevices, the credentials it answers
// notifications with. Every function returns a promise, which the app
// awaits from Go.
"use strict";

// herdDevices keeps this browser's push device of each workspace in
// IndexedDB: database "herd", object store "push", key the workspace id,
// value {device_id, credential}. IndexedDB rather than localStorage,
// because a service worker has no localStorage.
self.herdDevices = (() => {
  const databaseName = "herd";
  const storeName = "push";

  function open() {
    return new Promise((resolve, reject) => {
      const req = indexedDB.open(databaseName, 1);
      req.onupgradeneeded = () => req.result.createObjectStore(storeName);
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
      req.onblocked = () => reject(new Error("an older herd tab holds the device store; close it and try again"));
    });
  }

  // run opens the store in one transaction; op makes its requests and
  // returns a function that reads the result once the transaction has
  // committed, so a caller never sees a write that did not persist.
  async function run(mode, op) {
    const db = await open();
    try {
      return await new Promise((resolve, reject) => {
        const tx = db.transaction(storeName, mode);
        const result = op(tx.objectStore(storeName));
        tx.oncomplete = () => resolve(result());
        tx.onerror = () => reject(tx.error);
        tx.onabort = () => reject(tx.error || new Error("the device store's transaction was aborted"));
      });
    } finally {
      db.close();
    }
  }

  return {
    save: (workspaceId, device) =>
      run("readwrite", (store) => {
        store.put({ device_id: String(device.device_id), credential: String(device.credential) }, workspaceId);
        return () => undefined;
      }),
    load: (workspaceId) =>
      run("readonly", (store) => {
        const req = store.get(workspaceId);
        return () => req.result || null;
      }),
    // forget answers how many workspaces still have a device here: the
    // browser's one subscription serves them all, so it is dropped only
    // when none is left.
    forget: (workspaceId) =>
      run("readwrite", (store) => {
        store.delete(workspaceId);
        const count = store.count();
        return () => count.result;
      }),
    // entries lists every device with its workspace id.
    entries: () =>
      run("readonly", (store) => {
        const keys = store.getAllKeys();
        const values = store.getAll();
        return () => values.result.map((value, i) => ({ workspace_id: keys.result[i], ...value }));
      }),
  };
})();

self.herdPush = (() => {
  // readyTimeoutMs bounds the wait for the service worker:
  // navigator.serviceWorker.ready never settles when registering failed.
  const readyTimeoutMs = 10000;

  // support names what this browser lacks for Web Push ("" for nothing).
  // A page that is not a secure context (HTTPS or localhost) has no
  // service worker at all, so that is checked first.
  function support() {
    if (!self.isSecureContext) return "insecure";
    if (!("serviceWorker" in navigator)) return "no-service-worker";
    if (!("PushManager" in self)) return "no-push";
    if (!("Notification" in self)) return "no-notification";
    return "";
  }

  async function registration() {
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error("the service worker is not running; reload the page")), readyTimeoutMs);
    });
    try {
      return await Promise.race([navigator.serviceWorker.ready, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  // keyBytes decodes unpadded base64url (the server's VAPID key).
  function keyBytes(base64url) {
    const base64 = base64url.replace(/-/g, "+").replace(/_/g, "/");
    const raw = atob(base64 + "=".repeat((4 - (base64.length % 4)) % 4));
    return Uint8Array.from(raw, (c) => c.charCodeAt(0));
  }

  function sameBytes(buffer, bytes) {
    if (!buffer) return false;
    const a = new Uint8Array(buffer);
    return a.length === bytes.length && a.every((b, i) => b === bytes[i]);
  }

  return {
    support: async () => support(),
    permission: async () => ("Notification" in self ? Notification.permission : "default"),
    requestPermission: () => Notification.requestPermission(),
    // subscribe answers PushSubscription.toJSON(). A subscription made for
    // another key (the server's key pair was replaced) cannot be reused:
    // the browser refuses a second key on one registration.
    subscribe: async (publicKey) => {
      const key = keyBytes(publicKey);
      const push = (await registration()).pushManager;
      let subscription = await push.getSubscription();
      if (subscription && !sameBytes(subscription.options.applicationServerKey, key)) {
        await subscription.unsubscribe();
        subscription = null;
      }
      if (!subscription) {
        // Browsers take only pushes that show a notification.
        subscription = await push.subscribe({ userVisibleOnly: true, applicationServerKey: key });
      }
      return subscription.toJSON();
    },
    subscription: async () => {
      const subscription = await (await registration()).pushManager.getSubscription();
      return subscription ? subscription.toJSON() : null;
    },
    unsubscribe: async () => {
      const subscription = await (await registration()).pushManager.getSubscription();
      return subscription ? subscription.unsubscribe() : false;
    },
    saveDevice: (workspaceId, device) => self.herdDevices.save(workspaceId, device),
    loadDevice: (workspaceId) => self.herdDevices.load(workspaceId),
    forgetDevice: (workspaceId) => self.herdDevices.forget(workspaceId),
    // setAppBadge answers whether this browser shows a count on the app's
    // icon at all.
    setAppBadge: async (count) => {
      if (!("setAppBadge" in navigator)) return false;
      if (count > 0) await navigator.setAppBadge(count);
      else await navigator.clearAppBadge();
      return true;
    },
    // agent describes the browser for a device's default name.
    agent: async () => {
      const data = navigator.userAgentData;
      return {
        brands: data ? data.brands.map((b) => b.brand) : [],
        platform: data ? data.platform : "",
        user_agent: navigator.userAgent,
      };
    },
  };
})();
