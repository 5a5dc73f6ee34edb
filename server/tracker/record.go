package tracker

import "sync"

// FrameKind says what an agent frame means for activity.
type FrameKind uint8

// The frame kinds.
const (
	// FrameOutput is top-level assistant or reasoning output.
	FrameOutput FrameKind = iota + 1
	// FrameToolCall is the first frame of a tool call.
	FrameToolCall
	// FrameToolUpdate is a later frame of a tool call.
	FrameToolUpdate
	// FrameCycleEnd closes a model cycle of the given Origin.
	FrameCycleEnd
)

// WorkKind names a kind of background workload.
type WorkKind string

// The background workloads; only subagents are counted.
const (
	WorkSubagent WorkKind = "subagent"
	WorkShell    WorkKind = "shell"
	WorkMonitor  WorkKind = "monitor"
)

// Lifecycle marks a frame that starts or ends a background workload.
type Lifecycle string

// The lifecycle marks.
const (
	LifecycleStarted  Lifecycle = "started"
	LifecycleFinished Lifecycle = "finished"
)

// OriginHuman is the origin of the model cycle that answers a person's
// prompt; its end is the foreground's yield.
const OriginHuman = "human"

// Frame is what the tracker needs of one agent frame. The provenance
// fields (Parent, Work, WorkID, Lifecycle) count only when Attested is set
// by the agent runtime and the execution attests background work.
type Frame struct {
	Kind FrameKind
	// ToolID is the provider's tool call id of a tool frame.
	ToolID string
	// Attested says the frame's provenance comes through an adapter that
	// attests it.
	Attested  bool
	Parent    string
	Work      WorkKind
	WorkID    string
	Lifecycle Lifecycle
	// Origin is the origin of the model cycle a FrameCycleEnd closes.
	Origin string
}

// owner says whose work a tool call is.
type owner uint8

const (
	ownerForeground owner = iota + 1
	ownerBackground
	ownerChild // a call made by background work
)

// tool is the recorded ownership of one tool call.
type tool struct {
	exec  uint64
	owner owner
}

// workKey identifies a background workload.
type workKey struct {
	kind WorkKind
	id   string
}

// claimState is a held prompt claim.
type claimState struct {
	gen        uint64
	epoch      uint64 // the foreground epoch when the claim was taken
	dispatched bool
}

// maxTombstones bounds the terminal frames remembered per record for
// workloads whose launch has not been seen.
const maxTombstones = 256

// record is one session's activity.
type record struct {
	id            uint64
	session, task string
	mu            sync.Mutex // guards every field below
	dead          bool
	execs         map[uint64]Capabilities
	gen           uint64 // admission generation of the newest claim
	claim         *claimState
	epoch         uint64 // rises with every foreground output
	generating    bool
	yielded       uint64 // generation whose human-origin cycle ended
	tools         map[string]tool
	work          map[workKey]uint64 // live registration → owning execution
	tombs         map[workKey]uint64 // finished before launched → execution
	tombOrder     []workKey
	subagents     int // live subagent registrations
}

func newRecord(id uint64, session, task string) *record {
	return &record{
		id: id, session: session, task: task,
		execs: make(map[uint64]Capabilities), tools: make(map[string]tool),
		work: make(map[workKey]uint64), tombs: make(map[workKey]uint64),
	}
}

// viewLocked captures the record's activity.
func (r *record) viewLocked() View {
	v := View{
		Generating: r.generating, Claimed: r.claim != nil,
		Background: len(r.work) > 0, Subagents: r.subagents,
		Attested: len(r.execs) > 0, Handoff: len(r.execs) > 0,
	}
	for _, caps := range r.execs {
		v.Attested = v.Attested && caps.AttestsBackground
		v.Handoff = v.Handoff && caps.AttestsBackground && caps.Handoff
	}
	return v
}

// idleLocked reports whether nothing holds the record any more.
func (r *record) idleLocked() bool {
	return !r.dead && len(r.execs) == 0 && r.claim == nil
}

// currentLocked reports whether c is the record's held claim.
func (r *record) currentLocked(c Claim) bool {
	return !r.dead && c.record == r.id && r.claim != nil && r.claim.gen == c.gen
}

// claimLocked takes the next admission generation.
func (r *record) claimLocked() Claim {
	r.gen++
	r.claim = &claimState{gen: r.gen, epoch: r.epoch}
	r.generating = true
	r.yielded = 0
	return Claim{session: r.session, record: r.id, gen: r.gen}
}

// handoffReadyLocked reports whether the held claim may pass to a new
// human prompt (see Tracker.Handoff).
func (r *record) handoffReadyLocked() bool {
	c := r.claim
	return c != nil && c.dispatched && r.yielded == c.gen && !r.generating &&
		len(r.work) > 0 && r.viewLocked().Handoff
}

// detachLocked retires what execution exec owned.
func (r *record) detachLocked(exec uint64) {
	if _, ok := r.execs[exec]; !ok {
		return
	}
	delete(r.execs, exec)
	for id, t := range r.tools {
		if t.exec == exec {
			delete(r.tools, id)
		}
	}
	for k, owner := range r.work {
		if owner == exec {
			r.unregisterLocked(k)
		}
	}
	for k, owner := range r.tombs {
		if owner == exec {
			delete(r.tombs, k)
		}
	}
	r.tombOrder = r.tombOrder[:0]
	for k := range r.tombs {
		r.tombOrder = append(r.tombOrder, k)
	}
	// The execution's own output ends with it; a claim in flight keeps the
	// foreground until its turn completes or is released.
	if r.claim == nil {
		r.generating = false
	}
}

// cancelWorkLocked retires every live registration, the tombstones and
// the ownership of background tool calls and their children.
func (r *record) cancelWorkLocked() {
	for k := range r.work {
		r.unregisterLocked(k)
	}
	clear(r.tombs)
	r.tombOrder = r.tombOrder[:0]
	for id, t := range r.tools {
		if t.owner != ownerForeground {
			delete(r.tools, id)
		}
	}
}

// frameLocked applies one frame of execution exec.
func (r *record) frameLocked(exec uint64, caps Capabilities, f Frame) {
	attested := caps.AttestsBackground && f.Attested
	switch f.Kind {
	case FrameOutput:
		r.foregroundLocked(caps)
	case FrameCycleEnd:
		if !caps.AttestsBackground {
			return
		}
		r.generating = false
		if f.Origin == OriginHuman && r.claim != nil {
			r.yielded = r.claim.gen
		}
	case FrameToolCall, FrameToolUpdate:
		r.toolLocked(exec, caps, attested, f)
	}
}

// foregroundLocked records foreground output. Outside a claim it counts
// only for attesting executions, whose unsolicited cycles have an
// accountable end.
func (r *record) foregroundLocked(caps Capabilities) {
	if r.claim == nil && !caps.AttestsBackground {
		return
	}
	r.epoch++
	r.generating = true
}

// toolLocked applies a tool frame: attested lifecycle first, then
// ownership from positive evidence only.
func (r *record) toolLocked(exec uint64, caps Capabilities, attested bool, f Frame) {
	if attested && f.Work != "" && f.WorkID != "" {
		key := workKey{kind: f.Work, id: f.WorkID}
		switch f.Lifecycle {
		case LifecycleStarted:
			r.tools[f.ToolID] = tool{exec: exec, owner: ownerBackground}
			r.registerLocked(exec, key)
			return
		case LifecycleFinished:
			r.finishLocked(exec, key)
			return
		}
	}
	if f.Kind == FrameToolUpdate {
		// An update inherits the ownership its call recorded in this
		// execution; anything else is no evidence.
		if t, ok := r.tools[f.ToolID]; ok && t.exec == exec && t.owner == ownerForeground {
			r.foregroundLocked(caps)
		}
		return
	}
	if attested && f.Parent != "" {
		parent, ok := r.tools[f.Parent]
		if !ok || parent.exec != exec {
			return // unknown lineage keeps the current activity
		}
		if parent.owner == ownerForeground {
			r.tools[f.ToolID] = tool{exec: exec, owner: ownerForeground}
			r.foregroundLocked(caps)
			return
		}
		r.tools[f.ToolID] = tool{exec: exec, owner: ownerChild}
		return
	}
	r.tools[f.ToolID] = tool{exec: exec, owner: ownerForeground}
	r.foregroundLocked(caps)
}

// registerLocked records a live workload, unless its terminal frame came
// first.
func (r *record) registerLocked(exec uint64, key workKey) {
	if owner, ok := r.tombs[key]; ok && owner == exec {
		return
	}
	if _, ok := r.work[key]; ok {
		return
	}
	r.work[key] = exec
	if key.kind == WorkSubagent {
		r.subagents++
	}
}

// finishLocked retires a workload on its terminal frame; a duplicate is a
// no-op, and one before the launch leaves a bounded tombstone.
func (r *record) finishLocked(exec uint64, key workKey) {
	if owner, ok := r.work[key]; ok {
		if owner == exec {
			r.unregisterLocked(key)
		}
		return
	}
	if _, ok := r.tombs[key]; ok {
		return
	}
	if len(r.tombOrder) >= maxTombstones {
		delete(r.tombs, r.tombOrder[0])
		r.tombOrder = r.tombOrder[1:]
	}
	r.tombs[key] = exec
	r.tombOrder = append(r.tombOrder, key)
}

// unregisterLocked deletes a live registration.
func (r *record) unregisterLocked(key workKey) {
	delete(r.work, key)
	if key.kind == WorkSubagent {
		r.subagents--
	}
}
