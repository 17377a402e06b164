package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// listedRecord is one record listScript returned.
type listedRecord struct {
	member, json string
	total        int
	trail        []string
}

// redisPage reads one page of the client's records of kind, newest first,
// appending view (JSON, "" for none) to each returned qualified referral.
// The cursor is the buntdb store's: the sort line of the last returned
// record, so it seeks the client's sorted set with one ZREVRANGEBYLEX whose
// cost grows with the page, not with the records stored.
func (s *RedisStore) redisPage(ctx context.Context, l listing, clientID string, page Page, view string) ([]listedRecord, string, error) {
	limit, err := pageLimit(page.Limit)
	if err != nil {
		return nil, "", err
	}
	maxRange := "+"
	if page.Cursor != "" {
		line, err := decodeCursor(page.Cursor, l.kind, clientID)
		if err != nil {
			return nil, "", err
		}
		maxRange = "(" + member(clientID, line)
	}
	res, err := s.runClient(ctx, clientID, listScript, append([]any{l.kind, maxRange, limit, view, TrailInRecord}, quotaArgs(s.quota)...)...)
	if err != nil {
		return nil, "", err
	}
	reply, err := replyStrings(res)
	if err != nil {
		return nil, "", err
	}
	var out []listedRecord
	for i := 0; i < len(reply); {
		if i+4 > len(reply) {
			return nil, "", fmt.Errorf("redis: truncated listing reply")
		}
		total, err1 := strconv.Atoi(reply[i+2])
		n, err2 := strconv.Atoi(reply[i+3])
		if err1 != nil || err2 != nil || i+4+n > len(reply) {
			return nil, "", fmt.Errorf("redis: malformed listing reply")
		}
		out = append(out, listedRecord{member: reply[i], json: reply[i+1], total: total, trail: reply[i+4 : i+4+n]})
		i += 4 + n
	}
	if len(out) <= limit {
		return out, "", nil
	}
	out = out[:limit]
	next, err := encodeCursor(l.kind, clientSortPrefix(clientID)+out[limit-1].member)
	if err != nil {
		return nil, "", err
	}
	return out, next, nil
}

// ListReferrals returns one page of the client's referrals, newest first.
func (s *RedisStore) ListReferrals(ctx context.Context, clientID string, page Page) ([]referrals.Referral, string, error) {
	items, next, err := s.redisPage(ctx, referralListing(), clientID, page, "")
	if err != nil {
		return nil, "", fmt.Errorf("list referrals of client %q: %w", clientID, err)
	}
	out := make([]referrals.Referral, 0, len(items))
	for _, it := range items {
		rec, err := decodeJSON[referrals.Referral](it.member, it.json)
		if err != nil {
			return nil, "", fmt.Errorf("list referrals of client %q: %w", clientID, err)
		}
		out = append(out, rec)
	}
	return out, next, nil
}

// ListQualified returns one page of the client's qualified referrals,
// recording view on each returned record in the same script.
func (s *RedisStore) ListQualified(ctx context.Context, clientID string, page Page, view *referrals.AuditEntry) ([]referrals.QualifiedReferral, string, error) {
	v := ""
	if view != nil {
		b, err := json.Marshal(view)
		if err != nil {
			return nil, "", fmt.Errorf("list qualified referrals of client %q: encode audit entry: %w", clientID, err)
		}
		v = string(b)
	}
	items, next, err := s.redisPage(ctx, qualifiedListing(), clientID, page, v)
	if err != nil {
		return nil, "", fmt.Errorf("list qualified referrals of client %q: %w", clientID, err)
	}
	out := make([]referrals.QualifiedReferral, 0, len(items))
	for _, it := range items {
		rec, err := decodeQualified(it.member, it.json, it.total, it.trail)
		if err != nil {
			return nil, "", fmt.Errorf("list qualified referrals of client %q: %w", clientID, err)
		}
		out = append(out, rec)
	}
	return out, next, nil
}

// QualifiedAuditTrail returns one page of the record's whole trail, oldest
// first, with the buntdb store's cursors (the audit key of the last entry
// returned, whose seq is the list index of the next).
func (s *RedisStore) QualifiedAuditTrail(ctx context.Context, clientID, externalSourceID string, page Page) ([]referrals.AuditEntry, string, error) {
	out, next, err := s.auditPage(ctx, clientID, externalSourceID, page)
	if err != nil {
		return nil, "", fmt.Errorf("audit trail of qualified referral %q of client %q: %w", externalSourceID, clientID, err)
	}
	return out, next, nil
}

func (s *RedisStore) auditPage(ctx context.Context, clientID, id string, page Page) ([]referrals.AuditEntry, string, error) {
	prefix := auditKeyPrefix(clientID, id)
	limit, after, err := auditPageStart(prefix, page)
	if err != nil {
		return nil, "", err
	}
	res, err := s.runClient(ctx, clientID, auditScript, escape(id), after, limit+1)
	if err != nil {
		return nil, "", err
	}
	raw, err := replyStrings(res)
	if err != nil {
		return nil, "", err
	}
	out := make([]referrals.AuditEntry, len(raw))
	for i, e := range raw {
		if err := json.Unmarshal([]byte(e), &out[i]); err != nil {
			return nil, "", fmt.Errorf("decode audit entry %d: %w", after+uint64(i)+1, err)
		}
	}
	return auditPageEnd(prefix, out, after, limit)
}
