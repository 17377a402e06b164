package contract

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
)

// transport is the validating http.RoundTripper Checker.Transport returns.
type transport struct {
	c    *Checker
	base http.RoundTripper
}

// RoundTrip checks req, sends a copy of it without SkipHeader, checks the
// response and returns it with its body restored; every violation fails the
// checker's test. Like any RoundTripper it leaves req itself unchanged,
// apart from consuming and closing its body.
func (tr *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := tr.c.Exchange(tr.base, req)
	for _, v := range res.Violations {
		tr.c.t.Errorf("%s", v)
	}
	return res.Response, err
}

// Result is one checked exchange.
type Result struct {
	// Response is the response, its body restored; nil on a transport error.
	Response *http.Response
	// RequestError says why the request does not conform to the document;
	// nil when it does (or when it was marked with SkipHeader).
	RequestError error
	// Violations are the messages Transport would fail the test with,
	// including RequestError's.
	Violations []string
}

// Exchange is what Transport does for one request, sent with base (nil
// means http.DefaultTransport), except that the violations are returned
// instead of failing the test: for tests that decide what a violation
// means, such as sending requests the document refuses on purpose.
func (c *Checker) Exchange(base http.RoundTripper, req *http.Request) (Result, error) {
	if base == nil {
		base = http.DefaultTransport
	}
	body, err := drain(req.Body)
	if err != nil {
		return Result{}, fmt.Errorf("contract: read the body of %s %s: %w", req.Method, req.URL.Path, err)
	}
	mark := req.Header.Get(SkipHeader)

	out := withBody(req.Clone(req.Context()), req, body)
	out.Header.Del(SkipHeader)
	// The checks get their own copy: request validation reads the body and
	// may touch the request, and what is sent must be exactly what the test
	// built.
	ex := c.checkRequest(withBody(out.Clone(req.Context()), req, body), mark)
	res := Result{RequestError: ex.requestInvalid}

	resp, err := base.RoundTrip(out)
	if err != nil {
		res.Violations = ex.messages("no response")
		return res, err
	}
	respBody, err := drain(resp.Body)
	if err != nil {
		res.Violations = ex.messages(fmt.Sprint(resp.StatusCode))
		return res, fmt.Errorf("contract: read the response body of %s %s: %w", req.Method, req.URL.Path, err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(respBody))
	ex.checkResponse(resp.StatusCode, resp.Header, respBody)
	res.Response, res.Violations = resp, ex.messages(fmt.Sprint(resp.StatusCode))
	return res, nil
}

// drain reads and closes body; a nil body reads as nil.
func drain(body io.ReadCloser) ([]byte, error) {
	if body == nil {
		return nil, nil
	}
	defer body.Close()
	return io.ReadAll(body)
}

// withBody gives r (a clone of orig) a fresh reader over body. A request
// that had no body keeps none, so a GET is sent exactly as built.
func withBody(r, orig *http.Request, body []byte) *http.Request {
	if orig.Body == nil || orig.Body == http.NoBody {
		r.Body, r.GetBody = orig.Body, nil
		return r
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	r.ContentLength = int64(len(body))
	return r
}
