package journal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"testing"
)

// tricky holds every kind of character encoding/json escapes.
const tricky = "a\"b\\c<d>e&f\n\r\t\b\f\x00\x1f\x7f é€𝄞 \xff\xfe \u2028\u2029 end"

// everyField returns an entry with every field set to a value that is not
// its zero, found by reflection: a field added to Entry is set here too, so
// the test below fails until appendEntryJSON writes it.
func everyField(t *testing.T) Entry {
	t.Helper()
	var e Entry
	v := reflect.ValueOf(&e).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(fmt.Sprint(v.Type().Field(i).Name, tricky))
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(-7 - i))
		case reflect.Uint64:
			f.SetUint(1<<63 + uint64(i))
		case reflect.Float64:
			f.SetFloat(float64(i) + 0.125)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Map:
			h := map[string]string{}
			for k := range 20 { // more than appendHeaders's stack array
				h[fmt.Sprint("X-", 19-k, tricky)] = fmt.Sprint(k, tricky)
			}
			f.Set(reflect.ValueOf(h))
		case reflect.Slice:
			f.Set(reflect.ValueOf([]string{"path", "headers." + tricky}))
		case reflect.Pointer:
			if f.Type() == reflect.TypeFor[*RateLimit]() {
				f.Set(reflect.ValueOf(&RateLimit{Limit: 1000, Remaining: -1, Reset: 60}))
				continue
			}
			f.Set(reflect.ValueOf(&Upstream{URL: "https://real.example/x?" + tricky, Status: 502,
				Headers: map[string]string{"B": "2", "A": tricky}, Body: json.RawMessage(`{"a":1}`), BodyBytes: 7}))
		default:
			t.Fatalf("Entry.%s is a %s: teach everyField and appendEntryJSON about it", v.Type().Field(i).Name, f.Kind())
		}
	}
	return e
}

// appendEntryJSON writes the bytes encoding/json's Marshal writes, for
// every field, set or left empty, and fails where Marshal fails.
func TestAppendEntryJSONMatchesMarshal(t *testing.T) {
	typical := Entry{ID: 42, At: "2026-11-26T09:00:00.123456789Z", Method: "GET", Path: "/api/v1/referrals/trials",
		Endpoint: "GET /api/v1/referrals/trials", ClientID: "sandbox-partner", Status: 200, DurationMs: 0.173,
		RequestID: "b1e2ef9e-ff6e-4ebc-8102-1b2fae466436", RequestBytes: 1300,
		Headers: map[string]string{"Authorization": "Bearer [redacted]", "Host": "127.0.0.1:8080", "User-Agent": "wrk"}}
	cases := map[string]Entry{
		"zero":          {},
		"typical":       typical,
		"every field":   everyField(t),
		"empty headers": {Headers: map[string]string{}, Truncated: []string{}},
	}
	for _, f := range []float64{1e-7, -1e-7, 1e-6, 1e21, 1e20, -0.5, 123.456, 5e-324, math.MaxFloat64, 1.5e-300} {
		e := typical
		e.DurationMs, e.DelayMs, e.ClockOffsetSeconds = f, -f, f/3
		cases[fmt.Sprint("floats ", f)] = e
	}
	for name, e := range cases {
		want, err := json.Marshal(e)
		if err != nil {
			t.Fatalf("%s: Marshal: %v", name, err)
		}
		got, err := appendEntryJSON([]byte("prefix"), &e)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Errorf("%s:\n got %s\nwant prefix%s", name, got, want)
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		e := typical
		e.DelayMs = f
		if _, err := appendEntryJSON(nil, &e); err == nil {
			t.Errorf("DelayMs %v: no error; Marshal refuses it", f)
		}
	}
}

func FuzzAppendEntryJSON(f *testing.F) {
	f.Add("GET", "/p", "X-Name", "value", 0.25, uint64(1))
	f.Add(tricky, tricky, tricky, tricky, 1e-9, uint64(0))
	f.Add("", "", "", "", math.Inf(1), uint64(1<<63))
	f.Fuzz(func(t *testing.T, method, path, name, value string, ms float64, id uint64) {
		e := Entry{ID: id, Method: method, Path: path, Query: value, DurationMs: ms, DelayMs: -ms,
			Headers: map[string]string{name: value, value: name, "Host": path}, Truncated: []string{name}}
		want, wantErr := json.Marshal(e)
		got, err := appendEntryJSON(nil, &e)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("error %v, Marshal's %v", err, wantErr)
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Fatalf("\n got %s\nwant %s", got, want)
		}
	})
}

// BenchmarkEncodeEntry compares appendEntryJSON with encoding/json's
// Marshal on a typical GET's entry.
func BenchmarkEncodeEntry(b *testing.B) {
	e := Entry{ID: 42, At: "2026-11-26T09:00:00.123456789Z", Method: "GET", Path: "/api/v1/referrals/trials",
		Endpoint: "GET /api/v1/referrals/trials", ClientID: "sandbox-partner", TokenID: "abcdefghijklmnopqrstuv",
		TokenExpiresAt: "2026-11-26T10:00:00Z", Status: 200, DurationMs: 0.173, RequestID: "b1e2ef9e-ff6e-4ebc-8102-1b2fae466436",
		RequestBytes: 1300, Connection: "127.0.0.1:54321",
		Headers: map[string]string{"Authorization": "Bearer [redacted]", "Host": "127.0.0.1:8080", "User-Agent": "wrk"}}
	b.Run("Marshal", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(e); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("appendEntryJSON", func(b *testing.B) {
		for b.Loop() {
			if _, err := appendEntryJSON(make([]byte, 0, e.Size()), &e); err != nil {
				b.Fatal(err)
			}
		}
	})
}
