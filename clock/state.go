package clock

import (
	"maps"
	"time"
)

// State is every offset of a PerClient at one version: what replicas of a
// shared sandbox read from Redis before serving a request.
type State struct {
	// Version grows with every move; a State never replaces a newer one.
	Version int64
	// Global is the sandbox-wide offset from real time.
	Global time.Duration
	// Clients are the clients' own offsets, on top of Global.
	Clients map[string]time.Duration
}

// Apply replaces the global and per-client offsets with st's unless a State
// of a newer version was applied already, and reports whether it did.
// Requests of one replica read the shared clock concurrently; the version
// keeps a slow request's older read from undoing a newer one.
func (p *PerClient) Apply(st State) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st.Version < p.version {
		return false
	}
	p.version = st.Version
	p.global.mu.Lock()
	p.global.offset = st.Global
	p.global.mu.Unlock()
	clear(p.offsets)
	maps.Copy(p.offsets, st.Clients)
	return true
}

// Version is the version of the last State applied, 0 before any.
func (p *PerClient) Version() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.version
}
