-- Web Push: the server's VAPID key pair and the devices subscribed.
--
-- vapid_keys holds one row (id 1): the application server's P-256 key
-- pair, unpadded base64url as webpush-go makes it (the public key is the
-- uncompressed point, the private key the scalar). It is made on the first
-- start and kept, so subscriptions survive restarts and replicas share it;
-- of two replicas starting together the first insert wins.
--
-- push_devices holds one row per browser subscription and workspace (a
-- browser has one subscription, which each workspace it turned
-- notifications on for keeps as its own device). (endpoint, workspace_id)
-- is unique: subscribing the same endpoint for the same workspace again
-- updates that row, which keeps its id
-- and created_at. credential_digest is the SHA-256 digest of the secret of
-- the device's credential (the credential itself is shown once);
-- token_digest names the server token the device was subscribed under, so
-- a changed token hides the device and the next start removes it. The
-- notify_* columns are the device's preferences. last_sent_at is NULL
-- until a push to it was accepted.

-- On PostgreSQL push_devices.id uses the C collation, as tasks.id does,
-- so that the (created_at, id) order is the same on both dialects.

-- +goose Up
CREATE TABLE vapid_keys (
    id          INTEGER     NOT NULL PRIMARY KEY CHECK (id = 1),
    public_key  TEXT        NOT NULL,
    private_key TEXT        NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL
);

CREATE TABLE push_devices (
    id                   TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    workspace_id         TEXT        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name                 TEXT        NOT NULL,
    endpoint             TEXT        NOT NULL,
    p256dh               TEXT        NOT NULL,
    auth                 TEXT        NOT NULL,
    credential_digest    TEXT        NOT NULL,
    token_digest         TEXT        NOT NULL,
    notify_requests      BOOLEAN     NOT NULL DEFAULT TRUE,
    notify_errors        BOOLEAN     NOT NULL DEFAULT FALSE,
    notify_turns         BOOLEAN     NOT NULL DEFAULT FALSE,
    notify_pull_requests BOOLEAN     NOT NULL DEFAULT FALSE,
    created_at           TIMESTAMPTZ NOT NULL,
    updated_at           TIMESTAMPTZ NOT NULL,
    last_sent_at         TIMESTAMPTZ
);

CREATE UNIQUE INDEX push_devices_endpoint ON push_devices (endpoint, workspace_id);

-- Serves a workspace's devices of one token, oldest first, and the count
-- that bounds them.
CREATE INDEX push_devices_workspace ON push_devices (workspace_id, token_digest, created_at, id);

-- +goose Down
DROP TABLE push_devices;
DROP TABLE vapid_keys;
