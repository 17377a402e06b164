package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// Record kinds as the Redis scripts name them.
const (
	redisReferral  = "r"
	redisQualified = "q"
)

// redisRecord is one record ready for writeScript.
type redisRecord struct {
	kind, clientID, id string
	member, json       string
	audit              []string
}

// args flattens the record as writeScript reads it.
func (r redisRecord) args() []any {
	out := []any{r.kind, escape(r.id), r.member, r.json, len(r.audit)}
	for _, a := range r.audit {
		out = append(out, a)
	}
	return out
}

// member is a record's entry in its client's index: its sort line without
// the client prefix, which the per-client sorted set makes redundant.
func member(clientID, line string) string {
	return strings.TrimPrefix(line, clientSortPrefix(clientID))
}

// redisReferralRecord checks and encodes a referral.
func redisReferralRecord(r referrals.Referral) (redisRecord, error) {
	_, line, js, err := referralParts(r)
	if err != nil {
		return redisRecord{}, err
	}
	return redisRecord{kind: redisReferral, clientID: r.ClientID, id: r.OutcomesID, member: member(r.ClientID, line), json: js}, nil
}

// redisQualifiedRecord checks and encodes a qualified referral and its
// trail, with canonical times as the buntdb store keeps them.
func redisQualifiedRecord(q referrals.QualifiedReferral) (redisRecord, error) {
	_, value, err := encodeQualified(q)
	if err != nil {
		return redisRecord{}, err
	}
	trail, err := canonicalAuditTrail(q.AuditTrail)
	if err != nil {
		return redisRecord{}, err
	}
	audit, err := encodeAudit(trail)
	if err != nil {
		return redisRecord{}, err
	}
	line, js := splitValue(value)
	return redisRecord{kind: redisQualified, clientID: q.ClientID, id: q.ExternalSourceID, member: member(q.ClientID, line), json: js, audit: audit}, nil
}

func encodeAudit(entries []referrals.AuditEntry) ([]string, error) {
	out := make([]string, len(entries))
	for i, e := range entries {
		b, err := json.Marshal(e)
		if err != nil {
			return nil, fmt.Errorf("encode audit entry: %w", err)
		}
		out[i] = string(b)
	}
	return out, nil
}

// takenKeys is what writeScript does with a record whose key is taken.
type takenKeys string

const (
	overwriteTaken takenKeys = "0" // replace it
	refuseTaken    takenKeys = "1" // refuse the whole write
	// refuseTakenUnlessSame refuses it unless it holds this very record
	// and trail: the earlier run of a create whose reply was lost.
	refuseTakenUnlessSame takenKeys = "2"
	// checkTaken writes nothing: it answers the conflict refuseTaken
	// would, or nothing.
	checkTaken takenKeys = "3"
)

// maxRegisterAttempts bounds the rounds of one write between the client's
// slot and the global one: each round that ends in a new registration means
// a Reset flipped the client meanwhile.
const maxRegisterAttempts = 100

// write runs writeScript for records, all of clientID, under generation
// gen ("" for the client's current one). A client not yet in its
// generation's clients set is added to it first (registerScript), so the
// set never misses a client owning a record.
//
// limit is the quota the write must stay within: the store's for a
// create, none for loading fixtures.
func (s *RedisStore) write(ctx context.Context, clientID, gen string, clear bool, taken takenKeys, limit Quota, records []redisRecord) error {
	registered := ""
	for range maxRegisterAttempts {
		args := append([]any{gen, "0", string(taken), registered}, quotaArgs(limit)...)
		if clear {
			args[1] = "1"
		}
		for _, r := range records {
			args = append(args, r.args()...)
		}
		res, err := s.runClient(ctx, clientID, writeScript, args...)
		if err != nil {
			return err
		}
		reply, err := replyStrings(res)
		if err != nil || len(reply) == 0 {
			return fmt.Errorf("redis: malformed write reply (%v)", err)
		}
		switch {
		case reply[0] == "register":
			res, err := s.run(ctx, registerScript, clientID)
			if err != nil {
				return fmt.Errorf("list client %q: %w", clientID, err)
			}
			registered = fmt.Sprint(res)
			continue
		case len(reply) == 2 && reply[0] == "conflict":
			return fmt.Errorf("%w: key %q", ErrConflict, reply[1])
		}
		return nil
	}
	return fmt.Errorf("list client %q: flipped by a Reset %d times in a row", clientID, maxRegisterAttempts)
}

// CreateReferral stores a new trial-based referral.
func (s *RedisStore) CreateReferral(ctx context.Context, r referrals.Referral) error {
	rec, err := redisReferralRecord(r)
	if err == nil {
		err = s.write(ctx, r.ClientID, "", false, refuseTakenUnlessSame, s.quota, []redisRecord{rec})
	}
	if err != nil {
		return fmt.Errorf("create referral %q of client %q: %w", r.OutcomesID, r.ClientID, err)
	}
	return nil
}

// CreateQualified stores a new qualified referral and its trail.
func (s *RedisStore) CreateQualified(ctx context.Context, q referrals.QualifiedReferral) error {
	rec, err := redisQualifiedRecord(q)
	if err == nil {
		err = s.write(ctx, q.ClientID, "", false, refuseTakenUnlessSame, s.quota, []redisRecord{rec})
	}
	if err != nil {
		return fmt.Errorf("create qualified referral %q of client %q: %w", q.ExternalSourceID, q.ClientID, err)
	}
	return nil
}

// readReply is getScript's answer.
type readReply struct {
	gen, json string
	total     int
	trail     []string
}

// read runs getScript, appending view (JSON, "" for none) to a qualified
// referral's trail.
func (s *RedisStore) read(ctx context.Context, kind, clientID, id, view string) (readReply, error) {
	run := s.runClient // a view appended to the trail is a write
	if view == "" {
		run = s.runClientRead
	}
	res, err := run(ctx, clientID, getScript, append([]any{kind, escape(id), view, TrailInRecord}, quotaArgs(s.quota)...)...)
	if err != nil {
		return readReply{}, err
	}
	reply, err := replyStrings(res)
	if err != nil || len(reply) < 2 {
		return readReply{}, fmt.Errorf("redis: malformed read reply (%v)", err)
	}
	out := readReply{gen: reply[0], json: reply[1]}
	if len(reply) > 2 {
		if out.total, err = strconv.Atoi(reply[2]); err != nil {
			return readReply{}, fmt.Errorf("redis: malformed trail length: %w", err)
		}
		out.trail = reply[3:]
	}
	return out, nil
}

// GetReferral returns the client's referral with that outcomesId.
func (s *RedisStore) GetReferral(ctx context.Context, clientID, outcomesID string) (referrals.Referral, error) {
	rep, err := s.read(ctx, redisReferral, clientID, outcomesID, "")
	var rec referrals.Referral
	if err == nil {
		rec, err = decodeJSON[referrals.Referral](outcomesID, rep.json)
	}
	if err != nil {
		return referrals.Referral{}, fmt.Errorf("get referral %q of client %q: %w", outcomesID, clientID, err)
	}
	return rec, nil
}

// GetQualified returns the client's qualified referral, appending view to
// its trail in the same script when view is not nil.
func (s *RedisStore) GetQualified(ctx context.Context, clientID, externalSourceID string, view *referrals.AuditEntry) (referrals.QualifiedReferral, error) {
	rec, _, err := s.getQualified(ctx, clientID, externalSourceID, view)
	if err != nil {
		return referrals.QualifiedReferral{}, fmt.Errorf("get qualified referral %q of client %q: %w", externalSourceID, clientID, err)
	}
	return rec, nil
}

// getQualified reads the record with its trail, and returns the raw reply
// for UpdateQualified's compare-and-set.
func (s *RedisStore) getQualified(ctx context.Context, clientID, id string, view *referrals.AuditEntry) (referrals.QualifiedReferral, readReply, error) {
	v := ""
	if view != nil {
		b, err := json.Marshal(view)
		if err != nil {
			return referrals.QualifiedReferral{}, readReply{}, fmt.Errorf("encode audit entry: %w", err)
		}
		v = string(b)
	}
	rep, err := s.read(ctx, redisQualified, clientID, id, v)
	if err != nil {
		return referrals.QualifiedReferral{}, readReply{}, err
	}
	rec, err := decodeQualified(id, rep.json, rep.total, rep.trail)
	return rec, rep, err
}

// decodeQualified builds a qualified referral from its JSON and trail.
func decodeQualified(id, js string, total int, trail []string) (referrals.QualifiedReferral, error) {
	rec, err := decodeJSON[referrals.QualifiedReferral](id, js)
	if err != nil {
		return rec, err
	}
	rec.AuditTrail = make([]referrals.AuditEntry, len(trail))
	for i, e := range trail {
		if err := json.Unmarshal([]byte(e), &rec.AuditTrail[i]); err != nil {
			return rec, fmt.Errorf("decode audit entry of %q: %w", id, err)
		}
	}
	rec.AuditTrailTotal = total
	return rec, nil
}

// FindReferral returns the referral with that outcomesId, whoever owns it:
// that of the smallest escaped client id, as the buntdb store answers. Each
// client's records sit in its own slot, so it asks every client that may
// own a record (one pipelined round trip per node), not one index: an
// admin lookup, which a create racing with it may or may not see.
func (s *RedisStore) FindReferral(ctx context.Context, outcomesID string) (referrals.Referral, error) {
	rec, err := s.findReferral(ctx, outcomesID)
	if err != nil {
		return referrals.Referral{}, fmt.Errorf("find referral %q: %w", outcomesID, err)
	}
	return rec, nil
}

func (s *RedisStore) findReferral(ctx context.Context, outcomesID string) (referrals.Referral, error) {
	clients, err := s.listedClients(ctx)
	if err != nil {
		return referrals.Referral{}, err
	}
	sort.Slice(clients, func(i, j int) bool { return escape(clients[i]) < escape(clients[j]) })
	found, err := s.eachClient(ctx, clients, findScript, escape(outcomesID))
	if err != nil {
		return referrals.Referral{}, err
	}
	for i, v := range found {
		if js, ok := v.(string); ok && js != "" {
			return decodeJSON[referrals.Referral](outcomesID, js)
		} else if !ok {
			return referrals.Referral{}, fmt.Errorf("redis: unexpected reply %T for client %q", v, clients[i])
		}
	}
	return referrals.Referral{}, ErrNotFound
}

// decodeJSON parses a record Redis holds: JSON alone, without the sort
// line buntdb values start with.
func decodeJSON[T any](id, js string) (T, error) {
	var rec T
	if err := json.Unmarshal([]byte(js), &rec); err != nil {
		return rec, fmt.Errorf("decode record %q: %w", id, err)
	}
	return rec, nil
}
