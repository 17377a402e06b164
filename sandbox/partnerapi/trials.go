package partnerapi

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
)

// trialView is a trial as the API shows it (section 2.1): without the
// sandbox's active and acceptingReferrals switches.
type trialView struct {
	TrialID    string `json:"trialId"`
	AltTrialID string `json:"altTrialId"`
	VersionID  string `json:"versionId"`
	Name       string `json:"name"`
}

// encodeTrialsList renders the trials list once at start-up: trials do not
// change while the sandbox runs, and the list is the hottest read.
func encodeTrialsList(trials []referrals.Trial) ([]byte, error) {
	listed := []trialView{} // [] rather than null when no trial is listed
	for _, t := range trials {
		if t.Listed() {
			listed = append(listed, trialView{t.TrialID, t.AltTrialID, t.VersionID, t.Name})
		}
	}
	b, err := json.Marshal(map[string][]trialView{"trials": listed})
	if err != nil {
		return nil, fmt.Errorf("encode trials: %w", err)
	}
	return append(b, '\n'), nil
}

// Trials answers GET /api/v1/referrals/trials: the listed trials, encoded
// once at start.
func (a *API) Trials(w http.ResponseWriter, _ *http.Request, _ idp.Principal) {
	reply.SetJSONContentType(w.Header())
	_, _ = w.Write(a.trialsJSON)
}
