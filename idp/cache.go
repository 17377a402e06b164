package idp

import (
	"sync"
)

// maxCachedTokens bounds the validation cache; past it the cache is emptied,
// which costs one signature check per live token and nothing else.
const maxCachedTokens = 10000

// validationCache remembers tokens whose signature verified, so a partner's
// load test pays the RSA verification once per token, not once per request.
// Time and audience checks still run on every use.
type validationCache struct {
	mu      sync.RWMutex
	entries map[string]tokenEntry
}

func newValidationCache() *validationCache {
	return &validationCache{entries: make(map[string]tokenEntry)}
}

func (c *validationCache) get(raw string) (tokenEntry, bool) {
	c.mu.RLock()
	e, ok := c.entries[raw]
	c.mu.RUnlock()
	return e, ok
}

func (c *validationCache) put(raw string, e tokenEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= maxCachedTokens {
		clear(c.entries)
	}
	c.entries[raw] = e
}
