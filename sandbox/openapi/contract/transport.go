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
// response and returns it with its body restored. Like any RoundTripper it
// leaves req itself unchanged, apart from consuming and closing its body.
func (tr *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := drain(req.Body)
	if err != nil {
		return nil, fmt.Errorf("contract: read the body of %s %s: %w", req.Method, req.URL.Path, err)
	}
	mark := req.Header.Get(SkipHeader)

	out := withBody(req.Clone(req.Context()), req, body)
	out.Header.Del(SkipHeader)
	// The checks get their own copy: request validation reads the body and
	// may touch the request, and what is sent must be exactly what the test
	// built.
	ex := tr.c.checkRequest(withBody(out.Clone(req.Context()), req, body), mark)

	resp, err := tr.base.RoundTrip(out)
	if err != nil {
		ex.report("no response")
		return nil, err
	}
	respBody, err := drain(resp.Body)
	if err != nil {
		ex.report(fmt.Sprint(resp.StatusCode))
		return nil, fmt.Errorf("contract: read the response body of %s %s: %w", req.Method, req.URL.Path, err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(respBody))
	ex.checkResponse(resp.StatusCode, resp.Header, respBody)
	ex.report(fmt.Sprint(resp.StatusCode))
	return resp, nil
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
