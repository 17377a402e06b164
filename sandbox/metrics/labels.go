package metrics

import (
	"net/http"
	"strconv"
	"sync"
)

// Label caps: a label takes at most this many distinct values; the rest
// are counted under otherLabel, so no caller can grow the series without
// bound (a verified client's id, a failure rule's id).
const (
	// MaxClients bounds the distinct values of the client label.
	MaxClients = 100
	// MaxRules bounds the distinct values of the forced answers' rule label.
	MaxRules   = 100
	otherLabel = "other"
)

// metricMethod keeps the method label to the methods HTTP defines: a
// client may send any token as a method.
func metricMethod(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodTrace, http.MethodConnect:
		return method
	}
	return otherLabel
}

// labelCap passes through the first max distinct values of a label and
// turns every later one, and "", into otherLabel.
type labelCap struct {
	mu   sync.Mutex
	max  int
	seen map[string]struct{}
}

func newLabelCap(max int) *labelCap {
	return &labelCap{max: max, seen: make(map[string]struct{}, max)}
}

func (c *labelCap) value(v string) string {
	if v == "" {
		return otherLabel
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.seen[v]; ok {
		return v
	}
	if len(c.seen) >= c.max {
		return otherLabel
	}
	c.seen[v] = struct{}{}
	return v
}

// statusLabels are the labels of the statuses net/http names, each its
// number, and of the others from 100 to 599, each its class ("2xx"), made
// once so that counting a request allocates no label. A recording proxy
// passes on whatever status the real service answers: without the classes
// every status from 100 to 999 could become a series.
var statusLabels = func() (l [600]string) {
	for i := 100; i < len(l); i++ {
		if http.StatusText(i) != "" {
			l[i] = strconv.Itoa(i)
		} else {
			l[i] = strconv.Itoa(i/100) + "xx"
		}
	}
	return l
}()

// statusLabel is the status label of status: "none" when no answer was
// written, otherLabel beyond the classes HTTP defines.
func statusLabel(status int) string {
	switch {
	case status == 0:
		return "none"
	case status >= 100 && status < len(statusLabels):
		return statusLabels[status]
	}
	return otherLabel
}
