// Package push delivers Web Push messages (RFC 8030) from herd to the
// browsers that subscribed: each message encrypted for its device
// (RFC 8291) and signed with the server's VAPID key (RFC 8292) by
// github.com/SherClockHolmes/webpush-go, the one package that imports it.
// It knows nothing of tasks or sessions: the caller decides what to send
// to which device (store.PushTarget) and when.
//
// # Queues
//
// Send never waits. Each device has its own first-in, first-out queue of
// at most Config.QueueLength waiting messages, and a message leaves it
// only when the one before it is done, so one device never has two
// requests in flight and its messages arrive in the order sent. Overflow
// policies, each counted (herd_push_queue_drops_total):
//
//   - replace: a message whose notification tag equals that of one still
//     waiting takes its place (a task's newer state supersedes the older,
//     which was never shown);
//   - evict oldest: a full queue drops its oldest waiting message for the
//     new one.
//
// The queues are served by Config.Workers workers, lanes in the order
// they became ready, so a slow push service holds at most the workers
// and a device waiting for a retry holds none.
//
// # Outcomes
//
// 200, 201 and 202 are sent (Devices.MarkPushSent); 404 and 410 mean the
// push service dropped the subscription: the device is removed
// (Devices.DropPushDevice) with whatever waits for it. 429, 5xx and
// network errors are retried, after the Retry-After the service gave or
// else after 1 s, 2 s, 4 s… up to 5 min; the device's queue waits
// meanwhile, without a worker. A message is given up once its TTL has
// passed (counted from Send; every request carries the TTL that remains)
// or after Config.MaxAttempts requests. Other answers are logged with
// the service's reason and counted. SendNow, for a test push a person
// waits for, makes one request after what is queued and returns the
// service's reason instead of retrying.
//
// # Goroutines
//
//   - Config.Workers workers, started by New, end in Close;
//   - a retry timer's callback (Clock.AfterFunc) only moves its device's
//     queue back to the workers; Close stops pending timers and waits for
//     running ones;
//   - Close waits for the workers in a goroutine of its own that ends
//     with them.
//
// Close stops taking messages, drops those waiting for a retry, and lets
// the workers send the rest until its context ends; then it cancels the
// requests in flight and drops what is left. When it returns, nothing of
// the Sender runs.
package push
