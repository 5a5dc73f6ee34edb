package state

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/shared"
)

func counter() func() string {
	n := 0
	return func() string { n++; return "cm-" + strconv.Itoa(n) }
}

func TestOutboxEverySendGetsAFreshIDKeptUntilConfirmed(t *testing.T) {
	kv := MapKV{}
	o := NewOutbox(kv, "s1", counter())
	a := o.Add("first")
	b := o.Add("second")
	assert.NotEqual(t, a.ClientMessageID, b.ClientMessageID)
	assert.Contains(t, kv["herd.outbox.s1"], "first")

	o.Confirmed(a.ClientMessageID)
	o.Confirmed(b.ClientMessageID)
	assert.Empty(t, o.Sends())
	assert.NotContains(t, kv, "herd.outbox.s1")
}

func TestOutboxDroppedConnectionIsReconciledWithTheSameID(t *testing.T) {
	o := NewOutbox(MapKV{}, "s1", counter())
	s := o.Add("hello")
	o.Uncertain(s.ClientMessageID, true)
	require.Equal(t, SendUnconfirmed, o.Sends()[0].Status, "shown unconfirmed, not unknown")

	again := o.Reconcile()
	require.Len(t, again, 1)
	assert.Equal(t, s.ClientMessageID, again[0].ClientMessageID)
	assert.Equal(t, SendSending, o.Sends()[0].Status)
	assert.Empty(t, o.Reconcile(), "a send in flight is not sent twice")

	o.Confirmed(s.ClientMessageID) // the server answered duplicate
	assert.Empty(t, o.Sends())
}

func TestOutboxUnknownOutcomeOnlyAfterBoundedReconciliation(t *testing.T) {
	o := NewOutbox(MapKV{}, "s1", counter())
	s := o.Add("hello")
	for i := 1; i < MaxSendAttempts; i++ {
		o.Uncertain(s.ClientMessageID, true)
		assert.Equal(t, SendUnconfirmed, o.Sends()[0].Status, "attempt %d", i)
		require.Len(t, o.Reconcile(), 1)
	}
	o.Uncertain(s.ClientMessageID, false)
	assert.Equal(t, SendUnconfirmed, o.Sends()[0].Status, "a request never sent is not an attempt")
	o.Reconcile()
	o.Uncertain(s.ClientMessageID, true)
	assert.Equal(t, SendUnknown, o.Sends()[0].Status)
	assert.Empty(t, o.Reconcile(), "unknown waits for the person")

	r, ok := o.Retry(s.ClientMessageID)
	require.True(t, ok)
	assert.Equal(t, s.ClientMessageID, r.ClientMessageID, "a manual retry reuses the id")
	assert.Equal(t, SendSending, o.Sends()[0].Status)
}

func TestOutboxDefinitiveErrorIsShownAsWhatItIs(t *testing.T) {
	o := NewOutbox(MapKV{}, "s1", counter())
	s := o.Add("hello")
	o.Refused(s.ClientMessageID, "the session cannot take a prompt")
	got := o.Sends()[0]
	assert.Equal(t, SendFailed, got.Status)
	assert.Equal(t, "the session cannot take a prompt", got.Err)
	assert.Empty(t, o.Reconcile(), "a refusal is not retried by itself")
	o.Discard(s.ClientMessageID)
	assert.Empty(t, o.Sends())
}

func TestOutboxSurvivesAReload(t *testing.T) {
	kv := MapKV{}
	s := NewOutbox(kv, "s1", counter()).Add("kept")
	o := NewOutbox(kv, "s1", counter())
	again := o.Reconcile()
	require.Len(t, again, 1)
	assert.Equal(t, s.ClientMessageID, again[0].ClientMessageID)
	assert.Equal(t, "kept", again[0].Content)
}

func TestPromptable(t *testing.T) {
	for st, want := range map[shared.SessionState]bool{
		shared.SessionCreated: false, shared.SessionStarting: false, shared.SessionFailed: false,
		shared.SessionCancelled: false, shared.SessionRunning: true, shared.SessionWaitingForInput: true,
		shared.SessionCompleted: true, shared.SessionIdle: true,
	} {
		assert.Equal(t, want, Promptable(st), "%s", st)
	}
}

// A prompt's attachments are kept with it: a page reload restores them
// for the re-send under the same id.
func TestOutboxKeepsAttachmentsAcrossAReload(t *testing.T) {
	kv := MapKV{}
	img := shared.Attachment{Type: shared.AttachmentImage, MimeType: "image/png", Data: "AAAA"}
	file := shared.Attachment{Type: shared.AttachmentFile, Path: "src/main.go"}
	s := NewOutbox(kv, "s1", counter()).Add("look", img, file)
	again := NewOutbox(kv, "s1", counter()).Reconcile()
	require.Len(t, again, 1)
	assert.Equal(t, s.ClientMessageID, again[0].ClientMessageID)
	assert.Equal(t, []shared.Attachment{img, file}, again[0].Attachments)
}
