package reply

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestProblemTypes(t *testing.T) {
	tests := []struct {
		status int
		want   string
	}{
		{http.StatusBadRequest, "urn:referrals-sandbox:problem:bad-request"},
		{http.StatusUnprocessableEntity, "urn:referrals-sandbox:problem:validation-failed"},
		{http.StatusNotFound, "urn:referrals-sandbox:problem:not-found"},
		{http.StatusMethodNotAllowed, "urn:referrals-sandbox:problem:method-not-allowed"},
		{http.StatusConflict, "urn:referrals-sandbox:problem:conflict"},
		{http.StatusRequestEntityTooLarge, "urn:referrals-sandbox:problem:payload-too-large"},
		{http.StatusUnsupportedMediaType, "urn:referrals-sandbox:problem:unsupported-media-type"},
		{http.StatusUnauthorized, "urn:referrals-sandbox:problem:unauthorized"},
		{http.StatusForbidden, "urn:referrals-sandbox:problem:forbidden"},
		{http.StatusTooManyRequests, "urn:referrals-sandbox:problem:rate-limited"},
		{http.StatusInternalServerError, "urn:referrals-sandbox:problem:internal-error"},
		{http.StatusServiceUnavailable, "urn:referrals-sandbox:problem:unavailable"},
		{http.StatusTeapot, "about:blank"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			p := New(tt.status, "d")
			if p.Type != tt.want || p.Status != tt.status || p.Title != http.StatusText(tt.status) || p.Detail != "d" {
				t.Errorf("New(%d) = %+v, want type %s and title %q", tt.status, p, tt.want, http.StatusText(tt.status))
			}
		})
	}
}

func TestWriteProblem(t *testing.T) {
	req := httptest.NewRequest(http.MethodPost, "/api/v1/referrals/qualified", nil)
	p := Validation([]FieldError{{Field: "patient.gender", Message: "required"}}).ForRequest(req, "req-123")

	rec := httptest.NewRecorder()
	Write(rec, p)

	if rec.Code != http.StatusUnprocessableEntity {
		t.Errorf("status = %d, want 422", rec.Code)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type = %q, want application/problem+json", ct)
	}
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, rec.Body)
	}
	want := map[string]any{
		"type":     "urn:referrals-sandbox:problem:validation-failed",
		"title":    "Unprocessable Entity",
		"status":   float64(422),
		"detail":   "1 field(s) failed validation; see errors",
		"instance": "/api/v1/referrals/qualified",
		"traceId":  "req-123",
		"errors":   []any{map[string]any{"field": "patient.gender", "message": "required"}},
	}
	if fmt.Sprint(body) != fmt.Sprint(want) {
		t.Errorf("body =\n%v\nwant\n%v", body, want)
	}
}

func TestWriteProblemFillsDefaultsAndOmitsEmpty(t *testing.T) {
	rec := httptest.NewRecorder()
	Write(rec, Problem{})
	if rec.Code != http.StatusInternalServerError {
		t.Errorf("status = %d, want 500", rec.Code)
	}
	got := strings.TrimSpace(rec.Body.String())
	want := `{"type":"urn:referrals-sandbox:problem:internal-error","title":"Internal Server Error","status":500}`
	if got != want {
		t.Errorf("body = %s, want %s", got, want)
	}
}

func TestProblemFor(t *testing.T) {
	re := NewRequestError(http.StatusConflict, "externalSourceId \"x\" already exists")
	if p := For(fmt.Errorf("handler: %w", re)); p.Status != http.StatusConflict || p.Detail != re.Problem.Detail {
		t.Errorf("For(wrapped requestError) = %+v, want the 409", p)
	}
	p := For(errors.New("store: disk on fire"))
	if p.Status != http.StatusInternalServerError || strings.Contains(p.Detail, "disk") {
		t.Errorf("For(internal) = %+v, want a 500 that hides the cause", p)
	}
}
