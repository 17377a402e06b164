package sandbox_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// Listings: the caller's own records, newest first, in pages that neither
// repeat nor skip a record.

// pagedRecords is how many records the paging tests create: more than the
// default page of 50, so the default limit shows too.
const pagedRecords = 53

// createMany creates n records of kind l for the token's client, one
// second of sandbox time apart so their order is known, and returns their
// ids in creation order.
func (s *testSandbox) createMany(l apiList, token string, n int) []string {
	s.t.Helper()
	ids := make([]string, n)
	for i := range ids {
		if l == qualifiedList {
			q, _ := s.createQualified(token, fmt.Sprintf("paged-%02d", i))
			ids[i] = q.ExternalSourceID
		} else {
			ref, _ := s.createReferral(token, referralBody("TRIAL-CARDIO-001"))
			ids[i] = ref.OutcomesID
		}
		s.Clock.Advance(time.Second)
	}
	return ids
}

// collect follows nextCursor from the first page to the last with that
// limit ("" for the default), returning every id and each page's size.
func (s *testSandbox) collect(l apiList, token, limit string) (ids []string, sizes []int) {
	s.t.Helper()
	query := url.Values{}
	if limit != "" {
		query.Set("limit", limit)
	}
	for range pagedRecords + 2 { // more pages than records means a loop
		page := s.fetchPage(l, token, query.Encode())
		ids = append(ids, page.ids...)
		sizes = append(sizes, len(page.ids))
		if page.nextCursor == nil {
			return ids, sizes
		}
		query.Set("cursor", *page.nextCursor)
	}
	s.t.Fatalf("%s with limit %q: nextCursor never became null", l.path, limit)
	return nil, nil
}

// TestAPI_Paging pages through more records than the default page with
// several limits: every record once, newest first, nextCursor null at the end.
func TestAPI_Paging(t *testing.T) {
	for _, l := range []apiList{referralsList, qualifiedList} {
		t.Run(l.items, func(t *testing.T) {
			s := newSandbox(t)
			// The fixtures hold records of sandbox-partner only, so
			// partner-2 sees exactly what it created.
			token := s.token(partner2)
			newestFirst := reversed(s.createMany(l, token, pagedRecords))
			tests := []struct {
				limit string
				sizes []int
			}{
				{"", []int{50, 3}},
				{"1", slices.Repeat([]int{1}, pagedRecords)},
				{"5", append(slices.Repeat([]int{5}, 10), 3)},
				{"7", append(slices.Repeat([]int{7}, 7), 4)},
				{"53", []int{53}},
				{"500", []int{53}},
			}
			for _, tt := range tests {
				t.Run("limit="+tt.limit, func(t *testing.T) {
					ids, sizes := s.collect(l, token, tt.limit)
					if !slices.Equal(sizes, tt.sizes) {
						t.Errorf("page sizes %v, want %v", sizes, tt.sizes)
					}
					if !slices.Equal(ids, newestFirst) {
						t.Errorf("paged through %d ids (%d distinct), want all %d newest first, each once:\ngot  %v\nwant %v",
							len(ids), len(distinct(ids)), pagedRecords, ids, newestFirst)
					}
				})
			}
		})
	}
}

// TestAPI_PagingWhileWriting: records created between pages are newer than
// the cursor, so they neither appear on later pages nor push a record from
// one page onto the next.
func TestAPI_PagingWhileWriting(t *testing.T) {
	for _, l := range []apiList{referralsList, qualifiedList} {
		t.Run(l.items, func(t *testing.T) {
			s := newSandbox(t)
			token := s.token(partner2)
			want := reversed(s.createMany(l, token, 12))
			first := s.fetchPage(l, token, "limit=5")
			if l == qualifiedList {
				s.createQualified(token, "written-between-pages")
			} else {
				s.createReferral(token, referralBody("TRIAL-DIAB-003"))
			}
			ids := first.ids
			for cursor := first.nextCursor; cursor != nil; {
				page := s.fetchPage(l, token, url.Values{"limit": {"5"}, "cursor": {*cursor}}.Encode())
				ids, cursor = append(ids, page.ids...), page.nextCursor
			}
			if !slices.Equal(ids, want) {
				t.Errorf("paged %v\nwant  %v", ids, want)
			}
		})
	}
}

// TestAPI_ListOwnRecordsNewestFirst: a list holds the caller's records only,
// newest first; an empty one is [] with a null nextCursor.
func TestAPI_ListOwnRecordsNewestFirst(t *testing.T) {
	s := newSandbox(t)
	tests := []struct {
		name   string
		l      apiList
		client string
		want   int
	}{
		{"partner's fixture referrals", referralsList, partner, fixtureReferrals},
		{"partner's fixture qualified referrals", qualifiedList, partner, fixtureQualified},
		{"partner-2 has no referrals", referralsList, partner2, 0},
		{"partner-2 has no qualified referrals", qualifiedList, partner2, 0},
		{"read-only client has no referrals", referralsList, readonly, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page := s.fetchPage(tt.l, s.token(tt.client), "")
			if len(page.records) != tt.want || page.nextCursor != nil {
				t.Fatalf("%d records, nextCursor %v; want %d and null", len(page.records), page.nextCursor, tt.want)
			}
			records := make([]struct{ ClientID, SubmittedAt string }, len(page.records))
			for i, raw := range page.records {
				if err := json.Unmarshal(raw, &records[i]); err != nil {
					t.Fatal(err)
				}
			}
			for i, rec := range records {
				if rec.ClientID != tt.client {
					t.Errorf("record %s of %s listed for %s", page.ids[i], rec.ClientID, tt.client)
				}
				if i > 0 && rec.SubmittedAt > records[i-1].SubmittedAt {
					t.Errorf("record %d (%s) is newer than record %d (%s): want newest first", i, rec.SubmittedAt, i-1, records[i-1].SubmittedAt)
				}
			}
		})
	}
}

// TestAPI_ListQueryRefused: a bad limit or cursor is a 400 naming the
// parameter, including real cursors replayed where they do not belong.
func TestAPI_ListQueryRefused(t *testing.T) {
	s := newSandbox(t)
	token := s.token(partner)
	// A real cursor of each listing, to be replayed where it does not belong.
	referralsCursor := s.fetchPage(referralsList, token, "limit=1").nextCursor
	qualifiedCursor := s.fetchPage(qualifiedList, token, "limit=1").nextCursor
	if referralsCursor == nil || qualifiedCursor == nil {
		t.Fatal("the fixtures should give partner more than one record of each kind")
	}
	tests := []struct {
		name  string
		l     apiList
		token string
		query url.Values
		field string
	}{
		{"limit=0", referralsList, token, url.Values{"limit": {"0"}}, "limit"},
		{"limit=501", referralsList, token, url.Values{"limit": {"501"}}, "limit"},
		{"limit=-1", qualifiedList, token, url.Values{"limit": {"-1"}}, "limit"},
		{"limit=abc", referralsList, token, url.Values{"limit": {"abc"}}, "limit"},
		{"limit=abc on qualified", qualifiedList, token, url.Values{"limit": {"abc"}}, "limit"},
		{"limit=1.5", qualifiedList, token, url.Values{"limit": {"1.5"}}, "limit"},
		{"cursor not base64", referralsList, token, url.Values{"cursor": {"!!not-a-cursor!!"}}, "cursor"},
		{"cursor of made-up JSON", qualifiedList, token, url.Values{"cursor": {base64.RawURLEncoding.EncodeToString([]byte(`{"k":"q","l":"x"}`))}}, "cursor"},
		{"cursor of the other listing", qualifiedList, token, url.Values{"cursor": {*referralsCursor}}, "cursor"},
		{"cursor of the other listing, reversed", referralsList, token, url.Values{"cursor": {*qualifiedCursor}}, "cursor"},
		{"cursor of another partner", referralsList, s.token(partner2), url.Values{"cursor": {*referralsCursor}}, "cursor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(request{path: tt.l.path + "?" + tt.query.Encode(), token: tt.token, invalid: true})
			p := wantProblem(t, r, http.StatusBadRequest, sandbox.ProblemTypeBadRequest)
			wantFieldError(t, p, tt.field)
		})
	}
	for _, limit := range []string{"1", "500"} {
		if r := s.do(request{path: "/api/v1/referrals/?limit=" + limit, token: token}); r.Status != http.StatusOK {
			t.Errorf("limit=%s: %d %s, want 200", limit, r.Status, r.Body)
		}
	}
}

// TestAPI_ListWithoutTrailingSlash: both spellings of the list answer the
// same, without a redirect.
func TestAPI_ListWithoutTrailingSlash(t *testing.T) {
	s := newSandbox(t)
	token := s.token(partner)
	r := s.noRedirect().do(request{path: "/api/v1/referrals?limit=3", token: token})
	if r.Status != http.StatusOK {
		t.Fatalf("GET /api/v1/referrals: %d, want 200 without a redirect", r.Status)
	}
	var page struct{ Referrals []referrals.Referral }
	r.decode(t, &page)
	var ids []string
	for _, ref := range page.Referrals {
		ids = append(ids, ref.OutcomesID)
	}
	if want := s.fetchPage(referralsList, token, "limit=3").ids; !slices.Equal(ids, want) {
		t.Errorf("without the slash %v, with it %v", ids, want)
	}
}

// distinct returns the distinct values of ids.
func distinct(ids []string) []string {
	return slices.Compact(slices.Sorted(slices.Values(ids)))
}
