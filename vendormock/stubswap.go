package vendormock

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/wiremock/go-wiremock"
)

// replaceStubs replaces every mapping in WireMock with rules without a
// gap: the new rules are registered first (among stubs of equal priority
// WireMock tries the newest first, so each request meets either the old
// set or the new one), then every mapping that is not one of them is
// deleted. Clearing first left a moment with no stub, or only some: a
// send arriving then got WireMock's 404 (seen as REJECTED in
// ledger-lost-bbolt under load, when the recreated worker re-sent during a
// server-delay change). Errors: WireMock's admin API failing.
func (s *Stack) replaceStubs(rules []*wiremock.StubRule) error {
	keep := make(map[string]bool, len(rules))
	for _, r := range rules {
		if err := s.wm.StubFor(r); err != nil {
			return fmt.Errorf("register stub: %w", err)
		}
		keep[r.UUID()] = true
	}
	ids, err := s.mappingIDs()
	if err != nil {
		return err
	}
	for _, id := range ids {
		if keep[id] {
			continue
		}
		if err := s.wm.DeleteStubByID(id); err != nil {
			return fmt.Errorf("delete old stub %s: %w", id, err)
		}
	}
	return nil
}

// mappingIDs lists the ids of WireMock's stub mappings (GET
// /__admin/mappings; go-wiremock has no call for it).
func (s *Stack) mappingIDs() ([]string, error) {
	req, err := http.NewRequest(http.MethodGet, s.WireMockURL+"/__admin/mappings", nil)
	if err != nil {
		return nil, fmt.Errorf("list stubs: %w", err)
	}
	resp, err := s.adminHTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("list stubs: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("list stubs: status %d", resp.StatusCode)
	}
	var list struct {
		Mappings []struct {
			ID string `json:"id"`
		} `json:"mappings"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return nil, fmt.Errorf("list stubs: %w", err)
	}
	ids := make([]string, 0, len(list.Mappings))
	for _, m := range list.Mappings {
		ids = append(ids, m.ID)
	}
	return ids, nil
}
