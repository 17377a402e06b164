package contract

import (
	"context"
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/openapi"
)

// addAdminPaths validates the admin API's document and adds its paths to
// doc, so one router matches both and admin requests are checked exactly
// like API requests. The admin document's references were resolved when it
// was loaded, so its operations carry their own schemas into doc. A path in
// both documents is an error: one of them would silently lose.
func addAdminPaths(ctx context.Context, doc *openapi3.T) error {
	data, err := openapi.AdminDocument()
	if err != nil {
		return fmt.Errorf("build the admin OpenAPI document: %w", err)
	}
	admin, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		return fmt.Errorf("load the admin OpenAPI document: %w", err)
	}
	if err := admin.Validate(ctx); err != nil {
		return fmt.Errorf("the admin OpenAPI document is invalid: %w", err)
	}
	for path, item := range admin.Paths.Map() {
		if doc.Paths.Value(path) != nil {
			return fmt.Errorf("path %s is in both OpenAPI documents", path)
		}
		doc.Paths.Set(path, item)
	}
	return nil
}
