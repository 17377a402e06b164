package drift

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

const (
	// DefaultMaxRPS is how many requests a second drift sends to each side
	// unless told otherwise.
	DefaultMaxRPS = 2.0
	// DefaultTimeout bounds each request, the interface's recommended
	// client timeout.
	DefaultTimeout = 10 * time.Second
	// maxAttempts is how often a request answered 429 is sent in all.
	maxAttempts = 3
	// maxRetryAfter is the longest Retry-After drift waits for; a longer
	// one ends the retries and the 429 stands as the answer.
	maxRetryAfter = 60 * time.Second
	// maxBody is how much of an answer drift reads.
	maxBody = 1 << 20
)

// request is one HTTP request a probe sends.
type request struct {
	method, url string
	header      http.Header
	body        []byte
}

// answer is what came back: the status, the headers and the body.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// pacer sends one side's requests: at most maxRPS a second, each within
// the timeout, waiting out Retry-After and retrying 429s, and counting
// what it sent for the summary.
type pacer struct {
	client  *http.Client
	limiter *rate.Limiter
	wait    func(context.Context, time.Duration) error
	now     func() time.Time

	mu        sync.Mutex
	notBefore time.Time
	summary   RequestSummary
}

func newPacer(target, url string, client *http.Client, maxRPS float64, wait func(context.Context, time.Duration) error) *pacer {
	if wait == nil {
		wait = sleep
	}
	return &pacer{
		client:  client,
		limiter: rate.NewLimiter(rate.Limit(maxRPS), 1),
		wait:    wait,
		now:     time.Now,
		summary: RequestSummary{Target: target, URL: url, ByStatus: map[string]int{}},
	}
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// errTransport marks a request that got no answer: drift stops, since
// comparing half the probes would mislead.
var errTransport = errors.New("no answer")

// do sends r, retrying after a 429 as the answer's Retry-After (or a
// doubling backoff) says, and returns the last answer.
func (p *pacer) do(ctx context.Context, r request) (answer, error) {
	backoff := time.Second
	for attempt := 1; ; attempt++ {
		a, err := p.send(ctx, r)
		if err != nil {
			return a, err
		}
		delay, hasRetryAfter := retryAfter(a.header, p.now())
		if hasRetryAfter {
			p.holdUntil(p.now().Add(min(delay, maxRetryAfter)))
		}
		if a.status != http.StatusTooManyRequests || attempt == maxAttempts || delay > maxRetryAfter {
			return a, nil
		}
		if !hasRetryAfter {
			delay, backoff = backoff, backoff*2
			p.holdUntil(p.now().Add(delay))
		}
		p.mu.Lock()
		p.summary.Retried++
		p.mu.Unlock()
	}
}

// holdUntil makes the next request wait until t.
func (p *pacer) holdUntil(t time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t.After(p.notBefore) {
		p.notBefore = t
	}
}

func (p *pacer) send(ctx context.Context, r request) (answer, error) {
	p.mu.Lock()
	hold := p.notBefore.Sub(p.now())
	p.mu.Unlock()
	if hold > 0 {
		if err := p.wait(ctx, hold); err != nil {
			return answer{}, err
		}
		p.mu.Lock()
		p.summary.WaitedSeconds += hold.Seconds()
		p.mu.Unlock()
	}
	if err := p.limiter.Wait(ctx); err != nil {
		return answer{}, err
	}
	req, err := http.NewRequestWithContext(ctx, r.method, r.url, bytes.NewReader(r.body))
	if err != nil {
		return answer{}, fmt.Errorf("%s %s: %w", r.method, r.url, err)
	}
	if r.body == nil {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	for name, values := range r.header {
		req.Header[name] = values
	}
	req.Header.Set("User-Agent", "referrals-sandbox-drift")
	p.count(func(s *RequestSummary) { s.Sent++ })
	resp, err := p.client.Do(req)
	if err != nil {
		p.count(func(s *RequestSummary) { s.ByStatus["transport error"]++ })
		// The URL carries no secret (secrets travel in forms and headers),
		// so the error may name it.
		return answer{}, fmt.Errorf("%w from %s %s: %v", errTransport, r.method, r.url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		p.count(func(s *RequestSummary) { s.ByStatus["transport error"]++ })
		return answer{}, fmt.Errorf("%w from %s %s: reading the body: %v", errTransport, r.method, r.url, err)
	}
	p.count(func(s *RequestSummary) { s.ByStatus[strconv.Itoa(resp.StatusCode)]++ })
	return answer{status: resp.StatusCode, header: resp.Header, body: body}, nil
}

func (p *pacer) count(f func(*RequestSummary)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(&p.summary)
}

// report returns the summary so far.
func (p *pacer) report() RequestSummary {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.summary
	s.ByStatus = make(map[string]int, len(p.summary.ByStatus))
	for k, v := range p.summary.ByStatus {
		s.ByStatus[k] = v
	}
	return s
}

// retryAfter reads Retry-After as delta-seconds or an HTTP date.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}
