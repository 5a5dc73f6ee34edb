package state

// MaxDraftBytes bounds a kept draft; a longer one is kept cut to this size
// (on a rune boundary) so one pasted log cannot fill the browser's storage.
const MaxDraftBytes = 64 << 10

// Drafts keeps what a person typed in each task's composer, so switching
// tasks or reloading the page loses nothing. Drafts live in a KV (the
// browser's localStorage) under one key per task; an empty draft is
// deleted.
type Drafts struct {
	kv KV
}

// NewDrafts returns the drafts kept in kv.
func NewDrafts(kv KV) Drafts { return Drafts{kv: kv} }

func draftKey(taskID string) string { return "herd.draft." + taskID }

// Get returns the task's draft; "" when there is none.
func (d Drafts) Get(taskID string) string {
	v, _ := d.kv.Get(draftKey(taskID))
	return v
}

// Set keeps text as the task's draft.
func (d Drafts) Set(taskID, text string) {
	if taskID == "" {
		return
	}
	if text == "" {
		d.kv.Delete(draftKey(taskID))
		return
	}
	if len(text) > MaxDraftBytes {
		cut := MaxDraftBytes
		for cut > 0 && text[cut]&0xC0 == 0x80 {
			cut--
		}
		text = text[:cut]
	}
	d.kv.Set(draftKey(taskID), text)
}
