package sandbox

import (
	"context"
	"net"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/admin"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/exchange"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/partnerapi"
)

// The admin API is package admin; the root gives it what it needs here,
// and keeps the names its callers and tests know it by.

// JournalEntry is one journaled request (see package journal).
type JournalEntry = journal.Entry

// HARPath serves the journal as an HTTP Archive (HAR 1.2).
const HARPath = admin.HARPath

// HARContentType is the HAR's media type: JSON, which devtools import.
const HARContentType = admin.HARContentType

// AdminExposureWarning returns the warning serve logs at start when the
// admin API is open to more than this machine (see admin.ExposureWarning).
func AdminExposureWarning(addr net.Addr, adminToken string) string {
	return admin.ExposureWarning(addr, adminToken)
}

// allowedHosts is every host name the sandbox is configured to be reached
// at (see admin.ConfiguredHosts).
func allowedHosts(opts Config) ([]string, error) {
	return admin.ConfiguredHosts(opts.ListenAddr, opts.PublicURL, opts.TLSHosts, opts.AllowedHosts)
}

// newAdmin builds the admin API from the server's parts. What the root
// owns and the API shares with the partner API (the rate limiter, the
// strict reading of bodies and queries, the contract's record shapes, the
// route table's 405) goes in as function values, so that package admin
// never imports the root.
func (s *Server) newAdmin() (*admin.API, error) {
	return admin.New(admin.Config{
		Backend: s.backend, Provider: s.cfg.Provider, Replier: s.reply, Logger: s.log,
		Records: s.records, Trials: s.trials, Audience: idp.DefaultResource,
		PartnerRoles: []string{RoleTrialsRead, RoleReferralsRead, RoleReferralsWrite, RoleQualifiedReferralsRead, RoleQualifiedReferralsWrite},
		Token:        s.cfg.AdminToken, AllowedHosts: s.cfg.AllowedHosts, HTTPSOnly: s.cfg.HTTPSOnly,
		Version: s.cfg.Build.Version, RequestIDHeader: RequestIDHeader, RuleHeader: RuleHeader,
		RateLimits: adminRateLimits{s.limiter},
		Decode: func(r *http.Request, into any) ([]string, []FieldError, error) {
			return partnerapi.DecodeSubmission(r, partnerapi.MaxBodyBytes, into)
		},
		Shapes: admin.Shapes{Referral: s.api.ReferralRecord, Qualified: s.api.QualifiedRecord},
		Handle: func(r *mux.Router, path string, m map[string]http.Handler) { s.handle(r, path, m) },
	})
}

// adminRateLimits is what the admin API needs of the rate limiter.
type adminRateLimits struct{ l *rateLimiter }

// Reset refills every bucket.
func (a adminRateLimits) Reset(ctx context.Context) error { return a.l.reset(ctx) }

// Forget drops one client's bucket.
func (a adminRateLimits) Forget(ctx context.Context, clientID string) error {
	return a.l.forget(ctx, clientID)
}

// withAdminGuard keeps web pages and rebound DNS names away from the admin
// API (admin.API.Guard): a refused request goes no further, not even into
// the journal.
func (s *Server) withAdminGuard(next layer) layer {
	return func(w http.ResponseWriter, r *http.Request) exchange.Outcome {
		if s.admin.Guard(w, r) {
			return exchange.Outcome{}
		}
		return next(w, r)
	}
}
