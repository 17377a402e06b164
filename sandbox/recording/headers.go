package recording

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// hopHeaders are not forwarded either way (RFC 9110 7.6.1).
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// ForwardedHeaders are the partner's headers minus hop-by-hop ones, the
// sandbox's own X-Sandbox-* controls, which the real service must not see,
// and Accept-Encoding, so that the answer arrives decompressed and the
// journal can read it.
func ForwardedHeaders(h http.Header) http.Header {
	out := http.Header{}
	for name, values := range h {
		if IsHopHeader(name) || strings.EqualFold(name, "Accept-Encoding") || strings.HasPrefix(strings.ToLower(name), "x-sandbox-") {
			continue
		}
		out[name] = values
	}
	return out
}

// IsHopHeader reports whether name is a hop-by-hop header, which belongs
// to one connection and is not passed on either way.
func IsHopHeader(name string) bool {
	for _, h := range hopHeaders {
		if strings.EqualFold(h, name) {
			return true
		}
	}
	return false
}

// Failure names a transport error without its URL, which may carry a
// credential in its query.
func Failure(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if ue != nil && ue.Timeout() {
		return "timed out"
	}
	return err.Error()
}
