package journal

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// appendEntryJSON appends e exactly as encoding/json's Marshal writes it
// (TestAppendEntryJSONMatchesMarshal holds it to Marshal's bytes, field by
// field). The shared journal encodes every request's entry before sending
// it to Redis, and Marshal's reflection would be the largest cost
// journaling adds to a request in the shared mode. The rare Upstream goes
// through Marshal.
func appendEntryJSON(b []byte, e *Entry) ([]byte, error) {
	b = append(b, `{"id":`...)
	b = strconv.AppendUint(b, e.ID, 10)
	b = appendField(b, "at", e.At)
	b = appendField(b, "method", e.Method)
	b = appendField(b, "path", e.Path)
	b = appendOptional(b, "query", e.Query)
	b = appendOptional(b, "endpoint", e.Endpoint)
	b = appendOptional(b, "clientId", e.ClientID)
	b = appendOptional(b, "tokenId", e.TokenID)
	b = appendOptional(b, "tokenExpiresAt", e.TokenExpiresAt)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(e.Status), 10)
	b = appendOptional(b, "fault", e.Fault)
	b = appendOptional(b, "ruleId", e.RuleID)
	b = appendOptional(b, "scenario", e.Scenario)
	if e.RetryAfterSeconds != 0 {
		b = append(b, `,"retryAfterSeconds":`...)
		b = strconv.AppendInt(b, int64(e.RetryAfterSeconds), 10)
	}
	if rl := e.RateLimit; rl != nil {
		b = append(b, `,"rateLimit":{"limit":`...)
		b = strconv.AppendInt(b, int64(rl.Limit), 10)
		b = append(b, `,"remaining":`...)
		b = strconv.AppendInt(b, int64(rl.Remaining), 10)
		b = append(b, `,"reset":`...)
		b = strconv.AppendInt(b, int64(rl.Reset), 10)
		b = append(b, '}')
	}
	var err error
	b = append(b, `,"durationMs":`...)
	if b, err = appendFloat(b, e.DurationMs); err != nil {
		return nil, err
	}
	if e.DelayMs != 0 {
		b = append(b, `,"delayMs":`...)
		if b, err = appendFloat(b, e.DelayMs); err != nil {
			return nil, err
		}
	}
	b = appendField(b, "requestId", e.RequestID)
	b = append(b, `,"tls":`...)
	b = strconv.AppendBool(b, e.TLS)
	b = append(b, `,"requestBytes":`...)
	b = strconv.AppendInt(b, e.RequestBytes, 10)
	b = append(b, `,"headers":`...)
	b = appendHeaders(b, e.Headers)
	if len(e.Truncated) > 0 {
		b = append(b, `,"truncated":[`...)
		for i, t := range e.Truncated {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, t)
		}
		b = append(b, ']')
	}
	b = appendOptional(b, "namedClientId", e.NamedClientID)
	b = appendOptional(b, "connection", e.Connection)
	b = appendOptional(b, "run", e.Run)
	b = appendOptional(b, "tokenRefusal", e.TokenRefusal)
	if e.ClockOffsetSeconds != 0 {
		b = append(b, `,"clockOffsetSeconds":`...)
		if b, err = appendFloat(b, e.ClockOffsetSeconds); err != nil {
			return nil, err
		}
	}
	b = appendOptional(b, "location", e.Location)
	b = appendOptional(b, "submission", e.Submission)
	if e.Upstream != nil {
		raw, err := json.Marshal(e.Upstream)
		if err != nil {
			return nil, fmt.Errorf("encode upstream: %w", err)
		}
		b = append(b, `,"upstream":`...)
		b = append(b, raw...)
	}
	return append(b, '}'), nil
}

// appendField appends ,"name":value; appendOptional leaves out an empty
// value, as omitempty does.
func appendField(b []byte, name, value string) []byte {
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return appendJSONString(b, value)
}

func appendOptional(b []byte, name, value string) []byte {
	if value == "" {
		return b
	}
	return appendField(b, name, value)
}

// appendHeaders appends h as an object with its names in order, as
// encoding/json writes a map; a nil map is null.
func appendHeaders(b []byte, h map[string]string) []byte {
	if h == nil {
		return append(b, "null"...)
	}
	var stack [16]string // most entries have a few headers: no allocation
	names := stack[:0]
	for name := range h {
		names = append(names, name)
	}
	slices.Sort(names)
	b = append(b, '{')
	for i, name := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, name)
		b = append(b, ':')
		b = appendJSONString(b, h[name])
	}
	return append(b, '}')
}

// appendFloat writes f as encoding/json does: the shortest decimal that
// reads back as f, in exponent form below 1e-6 and from 1e21, with the
// exponent's leading zero dropped. NaN and the infinities are an error,
// as they are to Marshal.
func appendFloat(b []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("json: unsupported value: %v", f)
	}
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// 1e-07 becomes 1e-7.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}
