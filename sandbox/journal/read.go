package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ReadEntries reads journal entries saved to a file in any of the forms
// the sandbox writes them: one JSON entry a line (requests --json), a JSON
// array of entries, or pages of GET /__sandbox/requests ({"requests": [...]}).
func ReadEntries(r io.Reader) ([]Entry, error) {
	dec := json.NewDecoder(r)
	var out []Entry
	for n := 1; ; n++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("journal value %d: %w", n, err)
		}
		entries, err := entriesOf(raw)
		if err != nil {
			return nil, fmt.Errorf("journal value %d: %w", n, err)
		}
		out = append(out, entries...)
	}
}

func entriesOf(raw json.RawMessage) ([]Entry, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var list []Entry
		err := json.Unmarshal(trimmed, &list)
		return list, err
	}
	var page struct {
		Requests *[]Entry `json:"requests"`
	}
	if err := json.Unmarshal(trimmed, &page); err != nil {
		return nil, err
	}
	if page.Requests != nil {
		return *page.Requests, nil
	}
	var e Entry
	if err := json.Unmarshal(trimmed, &e); err != nil {
		return nil, err
	}
	if e.Method == "" || e.Status == 0 {
		return nil, errors.New("not a journal entry (no method or status)")
	}
	return []Entry{e}, nil
}
