package idp_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
)

// authSeen is how one token request authenticated.
type authSeen struct {
	basic bool // an Authorization header was sent
	post  bool // client_secret was in the body
}

// recorder serves the provider and records how each request authenticated,
// to tell x/oauth2's auth styles (and auto-detect's retries) apart.
type recorder struct {
	next http.Handler
	mu   sync.Mutex
	seen []authSeen
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	seen := authSeen{basic: r.Header.Get("Authorization") != ""}
	// Read and restore the body rather than ParseForm, so the provider
	// parses the request itself.
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if form, err := url.ParseQuery(string(body)); err == nil {
		seen.post = form.Get("client_secret") != ""
	}
	rec.mu.Lock()
	rec.seen = append(rec.seen, seen)
	rec.mu.Unlock()
	rec.next.ServeHTTP(w, r)
}

func (rec *recorder) requests() []authSeen {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]authSeen(nil), rec.seen...)
}

func TestOAuth2ClientCredentials(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		style  oauth2.AuthStyle
		id     string
		secret string
		// want is the authentication of each request x/oauth2 sends.
		want      []authSeen
		wantError string
	}{
		{"auto-detect", oauth2.AuthStyleAutoDetect, partnerID, partnerSecret, []authSeen{{basic: true}}, ""},
		{"in header", oauth2.AuthStyleInHeader, partnerID, partnerSecret, []authSeen{{basic: true}}, ""},
		{"in params", oauth2.AuthStyleInParams, partnerID, partnerSecret, []authSeen{{post: true}}, ""},
		{"odd credentials in header", oauth2.AuthStyleInHeader, oddID, oddSecret, []authSeen{{basic: true}}, ""},
		{"odd credentials in params", oauth2.AuthStyleInParams, oddID, oddSecret, []authSeen{{post: true}}, ""},
		// Auto-detect retries a refused Basic request in the form, so a wrong
		// secret costs two requests.
		{"auto-detect, wrong secret", oauth2.AuthStyleAutoDetect, partnerID, "wrong", []authSeen{{basic: true}, {post: true}}, idp.CodeInvalidClient},
		{"in header, wrong secret", oauth2.AuthStyleInHeader, partnerID, "wrong", []authSeen{{basic: true}}, idp.CodeInvalidClient},
		{"in params, wrong secret", oauth2.AuthStyleInParams, partnerID, "wrong", []authSeen{{post: true}}, idp.CodeInvalidClient},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newSandbox(t, withClients(oddClient()))
			rec := &recorder{next: s.provider.Handler()}
			srv := httptest.NewServer(rec)
			t.Cleanup(srv.Close)
			cfg := clientcredentials.Config{
				ClientID: tc.id, ClientSecret: tc.secret, TokenURL: srv.URL + tokenPath(),
				Scopes: []string{defaultScope}, AuthStyle: tc.style,
			}
			ctx := context.WithValue(context.Background(), oauth2.HTTPClient, srv.Client())
			tok, err := cfg.Token(ctx)
			if tc.wantError == "" {
				if err != nil {
					t.Fatalf("Token: %v", err)
				}
				// x/oauth2 turns expires_in into Expiry (on the real clock) and
				// keeps the raw field as an extra.
				if tok.AccessToken == "" || tok.TokenType != "Bearer" || tok.Expiry.IsZero() || tok.Extra("expires_in") != float64(3599) {
					t.Errorf("token type %q expiry %v expires_in %v, want Bearer with 3599 s", tok.TokenType, tok.Expiry, tok.Extra("expires_in"))
				}
				if _, err := s.provider.Validate(tok.AccessToken, idp.Expectation{Audience: idp.DefaultResource, ApplicationID: idp.ApplicationID(idp.DefaultResource), Issuers: []string{issuer(srv.URL)}}); err != nil {
					t.Errorf("Validate the issued token: %v", err)
				}
			} else {
				var re *oauth2.RetrieveError
				if !errors.As(err, &re) {
					t.Fatalf("Token error %v (%T), want *oauth2.RetrieveError", err, err)
				}
				if re.ErrorCode != tc.wantError || re.Response.StatusCode != http.StatusUnauthorized || re.ErrorDescription == "" {
					t.Errorf("RetrieveError code %q status %d description %q, want %q 401", re.ErrorCode, re.Response.StatusCode, re.ErrorDescription, tc.wantError)
				}
			}
			got := rec.requests()
			if len(got) != len(tc.want) {
				t.Fatalf("x/oauth2 sent %d requests %+v, want %+v", len(got), got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("request %d authenticated %+v, want %+v", i+1, got[i], tc.want[i])
				}
			}
		})
	}
}
