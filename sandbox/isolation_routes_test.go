package sandbox_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// Partner isolation under every API route: no request of one partner ever
// returns, counts or confirms a record of another. Where a partner asks
// about another's record, the answer must be the one it gets for an id
// nobody has, byte for byte apart from the request's own id.

// Trial TRIAL-ONCO-002 has a distinct altTrialId, so a referral on it can be
// addressed both ways.
const (
	isoTrialID    = "TRIAL-ONCO-002"
	isoAltTrialID = "NCT05550001"
)

// perRequestHeaders differ between any two responses: they are compared
// by presence only.
var perRequestHeaders = []string{sandbox.RequestIDHeader, "Date"}

// wantIndistinguishable fails unless a (about another partner's record) and
// b (about an id nobody has) are the same response: status, header names,
// header values apart from perRequestHeaders (Content-Length included), and
// body apart from the problem's instance and traceId.
func wantIndistinguishable(t *testing.T, a, b *response, owner string) {
	t.Helper()
	if a.Status != b.Status {
		t.Errorf("status %d about %s's record, %d about nobody's: existence confirmed", a.Status, owner, b.Status)
	}
	aKeys, bKeys := slices.Sorted(maps.Keys(a.Header)), slices.Sorted(maps.Keys(b.Header))
	if !slices.Equal(aKeys, bKeys) {
		t.Errorf("header names %v about %s's record, %v about nobody's", aKeys, owner, bKeys)
	}
	for _, k := range aKeys {
		if slices.Contains(perRequestHeaders, k) {
			continue
		}
		if av, bv := a.Header.Values(k), b.Header.Values(k); !slices.Equal(av, bv) {
			t.Errorf("header %s is %q about %s's record, %q about nobody's", k, av, owner, bv)
		}
	}
	if av, bv := comparableBody(t, a), comparableBody(t, b); !reflect.DeepEqual(av, bv) {
		t.Errorf("body about %s's record differs from the one about nobody's:\n%s\n%s", owner, a.Body, b.Body)
	}
	if strings.Contains(string(a.Body), owner+`"`) || strings.Contains(a.Header.Get("WWW-Authenticate"), owner) {
		t.Errorf("the answer names the owner %s: %s", owner, a.Body)
	}
}

// comparableBody is a JSON body without the members that name the request
// (instance, traceId), or the raw body when it is not a JSON object.
func comparableBody(t *testing.T, r *response) any {
	t.Helper()
	var m map[string]any
	if len(r.Body) == 0 || json.Unmarshal(r.Body, &m) != nil {
		return string(r.Body)
	}
	delete(m, "instance")
	delete(m, "traceId")
	return m
}

// listedRecord is a record as a listing shows it.
type listedRecord struct{ id, clientID string }

// listAll walks every page of l as token's client, two records a page so
// that cursors are exercised; bounded in case nextCursor never ends.
func (s *testSandbox) listAll(l apiList, token string) []listedRecord {
	s.t.Helper()
	var all []listedRecord
	query := "limit=2"
	for range 1000 {
		page := s.fetchPage(l, token, query)
		for i, raw := range page.records {
			var rec struct {
				ClientID string `json:"clientId"`
			}
			if err := json.Unmarshal(raw, &rec); err != nil {
				s.t.Fatal(err)
			}
			all = append(all, listedRecord{page.ids[i], rec.ClientID})
		}
		if page.nextCursor == nil {
			return all
		}
		query = "limit=2&cursor=" + url.QueryEscape(*page.nextCursor)
	}
	s.t.Fatalf("%s: more than 1000 pages", l.path)
	return nil
}

// TestIsolation_EveryRoute: for each API route and both directions between
// sandbox-partner and sandbox-partner-2, the prober's requests about the
// owner's records get exactly what requests about unknown ids get.
func TestIsolation_EveryRoute(t *testing.T) {
	s := newSandbox(t)
	for _, d := range []struct{ owner, prober string }{{partner, partner2}, {partner2, partner}} {
		t.Run(d.owner+" probed by "+d.prober, func(t *testing.T) {
			s := s.as(t)
			ownerToken, proberToken := s.token(d.owner), s.token(d.prober)
			lists := []apiList{referralsList, qualifiedList}
			before := map[string][]listedRecord{}
			for _, l := range lists {
				before[l.path] = s.listAll(l, proberToken)
			}

			// The owner's records: two of each, so its listings have cursors.
			// Unknown ids are fresh and of the same length as the owner's,
			// so even Content-Length cannot tell them apart.
			ref, _ := s.createReferral(ownerToken, referralBody(isoTrialID))
			ref2, _ := s.createReferral(ownerToken, referralBody(isoTrialID))
			ownerSource, ownerSource2 := "iso-"+uuid.NewString(), "iso-"+uuid.NewString()
			s.createQualified(ownerToken, ownerSource)
			s.createQualified(ownerToken, ownerSource2)
			nobodysOutcomes, nobodysSource := uuid.NewString(), "iso-"+uuid.NewString()
			ownerIDs := []string{ref.OutcomesID, ref2.OutcomesID, ownerSource, ownerSource2}

			t.Run("lists neither return nor count the owner's records", func(t *testing.T) {
				s := s.as(t)
				for _, l := range lists {
					after := s.listAll(l, proberToken)
					if !slices.Equal(after, before[l.path]) {
						t.Errorf("%s: the prober's listing changed when %s added records:\nbefore %v\nafter  %v", l.path, d.owner, before[l.path], after)
					}
					for _, rec := range after {
						if rec.clientID != d.prober || slices.Contains(ownerIDs, rec.id) {
							t.Errorf("%s lists %s of %s to %s", l.path, rec.id, rec.clientID, d.prober)
						}
					}
				}
			})

			probes := []struct {
				name, method, ownerPath, nobodysPath string
				ownerStatus                          int // what the owner itself gets on ownerPath
			}{
				{"GET referral by trialId", http.MethodGet, "/api/v1/referrals/" + isoTrialID + "/" + ref.OutcomesID, "/api/v1/referrals/" + isoTrialID + "/" + nobodysOutcomes, http.StatusOK},
				{"GET referral by altTrialId", http.MethodGet, "/api/v1/referrals/" + isoAltTrialID + "/" + ref.OutcomesID, "/api/v1/referrals/" + isoAltTrialID + "/" + nobodysOutcomes, http.StatusOK},
				{"HEAD referral by trialId", http.MethodHead, "/api/v1/referrals/" + isoTrialID + "/" + ref.OutcomesID, "/api/v1/referrals/" + isoTrialID + "/" + nobodysOutcomes, http.StatusOK},
				{"HEAD referral by altTrialId", http.MethodHead, "/api/v1/referrals/" + isoAltTrialID + "/" + ref.OutcomesID, "/api/v1/referrals/" + isoAltTrialID + "/" + nobodysOutcomes, http.StatusOK},
				{"GET qualified referral", http.MethodGet, "/api/v1/referrals/qualified/" + ownerSource, "/api/v1/referrals/qualified/" + nobodysSource, http.StatusOK},
				{"HEAD qualified referral", http.MethodHead, "/api/v1/referrals/qualified/" + ownerSource, "/api/v1/referrals/qualified/" + nobodysSource, http.StatusOK},
				{"DELETE qualified referral", http.MethodDelete, "/api/v1/referrals/qualified/" + ownerSource, "/api/v1/referrals/qualified/" + nobodysSource, http.StatusMethodNotAllowed},
				{"DELETE referral", http.MethodDelete, "/api/v1/referrals/" + isoTrialID + "/" + ref.OutcomesID, "/api/v1/referrals/" + isoTrialID + "/" + nobodysOutcomes, http.StatusMethodNotAllowed},
			}
			for _, p := range probes {
				t.Run(p.name, func(t *testing.T) {
					s := s.as(t)
					// GET goes through the contract check; other methods are
					// not all in the document.
					plain := p.method != http.MethodGet
					if r := s.do(request{method: p.method, path: p.ownerPath, token: ownerToken, plain: plain}); r.Status != p.ownerStatus {
						t.Fatalf("control: the owner gets %d on %s %s, want %d", r.Status, p.method, p.ownerPath, p.ownerStatus)
					}
					theirs := s.do(request{method: p.method, path: p.ownerPath, token: proberToken, plain: plain})
					nobodys := s.do(request{method: p.method, path: p.nobodysPath, token: proberToken, plain: plain})
					if theirs.Status == http.StatusOK {
						t.Fatalf("%s read %s's record: %s", d.prober, d.owner, theirs.Body)
					}
					if h := theirs.Header.Get("Location"); h != "" {
						t.Errorf("Location %q on a probe of %s's record", h, d.owner)
					}
					wantIndistinguishable(t, theirs, nobodys, d.owner)
				})
			}

			t.Run("ids built to collide with the owner's keys", func(t *testing.T) {
				s := s.as(t)
				for _, path := range []string{
					"/api/v1/referrals/qualified/" + ownerSource + ":" + d.owner,
					"/api/v1/referrals/qualified/" + ownerSource + "%3A" + url.PathEscape(d.owner),
					"/api/v1/referrals/qualified/" + ownerSource + "%253A" + url.PathEscape(d.owner),
					"/api/v1/referrals/" + isoTrialID + "/" + ref.OutcomesID + ":" + d.owner,
					"/api/v1/referrals/" + isoTrialID + "/" + ref.OutcomesID + "%3A" + url.PathEscape(d.owner),
				} {
					if r := s.do(request{path: path, token: proberToken, plain: true}); r.Status != http.StatusNotFound {
						t.Errorf("%s: %d %s, want 404", path, r.Status, r.Body)
					}
				}
			})

			t.Run("the owner's cursors give the prober nothing of the owner's", func(t *testing.T) {
				s := s.as(t)
				for _, from := range lists {
					page := s.fetchPage(from, ownerToken, "limit=1")
					if page.nextCursor == nil {
						t.Fatalf("control: the owner's %s has no second page", from.path)
					}
					cursor := url.QueryEscape(*page.nextCursor)
					for _, on := range lists {
						r := s.do(request{path: on.path + "?limit=1&cursor=" + cursor, token: proberToken, invalid: true})
						switch r.Status {
						case http.StatusBadRequest:
							p := wantProblem(t, r, http.StatusBadRequest, sandbox.ProblemTypeBadRequest)
							if !slices.Contains(errorFields(p), "cursor") {
								t.Errorf("400 for the owner's cursor names %v, want cursor", errorFields(p))
							}
							// A 400 must not tell the owner's cursor from junk.
							junk := s.do(request{path: on.path + "?limit=1&cursor=" + strings.Repeat("A", len(cursor)), token: proberToken, invalid: true})
							wantIndistinguishable(t, r, junk, d.owner)
						case http.StatusOK:
							var body map[string][]struct {
								ID       string `json:"outcomesId"`
								SourceID string `json:"externalSourceId"`
								ClientID string `json:"clientId"`
							}
							r.decode(t, &body)
							for _, rec := range body[on.items] {
								if rec.ClientID != d.prober || slices.Contains(ownerIDs, rec.ID+rec.SourceID) {
									t.Errorf("%s with %s's cursor from %s lists %+v to %s", on.path, d.owner, from.path, rec, d.prober)
								}
							}
						default:
							t.Errorf("%s with %s's cursor from %s: %d %s, want 400 or the prober's own records", on.path, d.owner, from.path, r.Status, r.Body)
						}
					}
				}
			})

			t.Run("submitting the owner's externalSourceId is a plain 201", func(t *testing.T) {
				s := s.as(t)
				theirs := s.do(request{method: http.MethodPost, path: "/api/v1/referrals/qualified", token: proberToken, body: qualifiedBody(ownerSource2)})
				nobodys := s.do(request{method: http.MethodPost, path: "/api/v1/referrals/qualified", token: proberToken, body: qualifiedBody("iso-" + uuid.NewString())})
				if theirs.Status != http.StatusCreated {
					t.Fatalf("%s submits %s's externalSourceId: %d %s, want 201 (409 would confirm it exists)", d.prober, d.owner, theirs.Status, theirs.Body)
				}
				var q referrals.QualifiedReferral
				theirs.decode(t, &q)
				if q.ClientID != d.prober || theirs.Header.Get("Location") != "/api/v1/referrals/qualified/"+ownerSource2 {
					t.Errorf("created clientId %q Location %q, want the prober's own record", q.ClientID, theirs.Header.Get("Location"))
				}
				if k1, k2 := slices.Sorted(maps.Keys(theirs.Header)), slices.Sorted(maps.Keys(nobodys.Header)); !slices.Equal(k1, k2) {
					t.Errorf("header names %v with %s's id, %v with a fresh one", k1, d.owner, k2)
				}
				if l1, l2 := theirs.Header.Get("Content-Length"), nobodys.Header.Get("Content-Length"); l1 != l2 {
					t.Errorf("Content-Length %s with %s's id, %s with a fresh one of the same length", l1, d.owner, l2)
				}
				// Control: the prober's own duplicate is a 409, so the 201
				// above is isolation and not a missing conflict check.
				again := s.do(request{method: http.MethodPost, path: "/api/v1/referrals/qualified", token: proberToken, body: qualifiedBody(ownerSource2)})
				wantProblem(t, again, http.StatusConflict, sandbox.ProblemTypeConflict)
			})

			t.Run("the owner's records are untouched by the probes", func(t *testing.T) {
				s := s.as(t)
				for _, id := range []string{ownerSource, ownerSource2} {
					var q referrals.QualifiedReferral
					r := s.do(request{path: "/api/v1/referrals/qualified/" + id, token: ownerToken})
					r.decode(t, &q)
					if r.Status != http.StatusOK || q.ClientID != d.owner || q.Patient != qualifiedPatient() {
						t.Errorf("%s reads %s: %d clientId %q patient %+v, want its record unchanged", d.owner, id, r.Status, q.ClientID, q.Patient)
					}
					for _, e := range q.AuditTrail {
						if e.Actor != d.owner {
							t.Errorf("audit entry on %s's %s by %s: %+v", d.owner, id, e.Actor, e)
						}
					}
				}
				var got referrals.Referral
				s.do(request{path: "/api/v1/referrals/" + isoTrialID + "/" + ref.OutcomesID, token: ownerToken}).decode(t, &got)
				if !reflect.DeepEqual(got, ref) {
					t.Errorf("%s's referral changed:\n%+v\n%+v", d.owner, got, ref)
				}
			})
		})
	}
}

// qualifiedPatient is the patient qualifiedBody submits, as stored.
func qualifiedPatient() referrals.Patient {
	p := validPatient()
	return referrals.Patient{FirstName: p["firstName"].(string), LastName: p["lastName"].(string), DateOfBirth: p["dateOfBirth"].(string), Gender: p["gender"].(string)}
}
