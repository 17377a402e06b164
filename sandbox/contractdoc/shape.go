package contractdoc

import "encoding/json"

// Render builds a record answer: the submitted members the shape declares
// (every one when it declares none), as sent, then the sandbox-owned members
// it declares, from values. A member the sandbox owns is never taken from
// the submission, and one the shape does not declare is left out.
func (s *Shape) Render(submission json.RawMessage, values map[Member]any) (map[string]any, error) {
	out := map[string]any{}
	if len(submission) > 0 {
		var sent map[string]json.RawMessage
		if err := json.Unmarshal(submission, &sent); err != nil {
			return nil, err
		}
		for name, v := range sent {
			if _, owned := s.Owned[name]; !owned && (s.open || s.declared[name]) {
				out[name] = v
			}
		}
	}
	for name, m := range s.Owned {
		if v, ok := values[m]; ok {
			out[name] = v
		}
	}
	return out, nil
}

// OpenShape is the shape of a record no schema describes: every submitted
// member as sent, and the given sandbox members under their own names.
func OpenShape(members ...Member) *Shape {
	s := &Shape{Owned: map[string]Member{}, declared: map[string]bool{}, open: true}
	for _, m := range members {
		s.Owned[string(m)] = m
	}
	return s
}
