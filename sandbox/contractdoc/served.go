package contractdoc

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Served returns the document with its servers set to serverURL (the
// sandbox's real address), or serverURL + /api/v1 when the document writes
// its paths under the API's base. Everything else is served byte for byte
// as supplied: only the servers member is replaced.
func (c *Contract) Served(serverURL string) ([]byte, error) {
	if c.PathsUnderServer() {
		serverURL += apiBase
	}
	servers, err := json.Marshal([]map[string]string{{
		"url":         serverURL,
		"description": "The referrals sandbox standing in for this contract's service",
	}})
	if err != nil {
		return nil, err
	}
	start, end, err := topLevelMember(c.document, "servers")
	if err != nil {
		return nil, fmt.Errorf("serve the contract: %w", err)
	}
	var out bytes.Buffer
	if start < 0 { // no servers member: add one first
		open := bytes.IndexByte(c.document, '{') + 1
		out.Write(c.document[:open])
		out.WriteString(`"servers":`)
		out.Write(servers)
		out.WriteByte(',')
		out.Write(c.document[open:])
		return out.Bytes(), nil
	}
	out.Write(c.document[:start])
	out.WriteString(": ")
	out.Write(servers)
	out.Write(c.document[end:])
	return out.Bytes(), nil
}

// topLevelMember finds the member name of the top-level object: start is
// the offset just after its name, end just after its value; start is -1 when
// there is no such member.
func topLevelMember(doc []byte, name string) (start, end int, err error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	if _, err := dec.Token(); err != nil { // {
		return 0, 0, err
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return 0, 0, err
		}
		at := int(dec.InputOffset())
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return 0, 0, err
		}
		if key == name {
			return at, int(dec.InputOffset()), nil
		}
	}
	return -1, -1, nil
}
