package idp

import "strings"

// Entra's tenant-independent authorities. They have discovery documents
// (with the issuer template https://host/{tenantid}/v2.0) but cannot issue
// an app-only token: client credentials need the tenant the application is
// registered in.
const (
	tenantCommon        = "common"
	tenantOrganizations = "organizations"
	tenantConsumers     = "consumers"
)

// issuerTemplateTenant is what Entra writes in place of the tenant in the
// issuer of a tenant-independent discovery document.
const issuerTemplateTenant = "{tenantid}"

// tenantIndependent reports whether tenant is common, organizations or
// consumers (as canonicalTenant spells them).
func tenantIndependent(tenant string) bool {
	switch tenant {
	case tenantCommon, tenantOrganizations, tenantConsumers:
		return true
	}
	return false
}

// canonicalTenant is how the sandbox spells a tenant named in a URL: Entra
// compares tenant GUIDs and the tenant-independent names without regard to
// case, and its answers (issuer, discovery endpoints) name the canonical
// form, so the sandbox's tenant as configured and the lower-case
// independent names. Any other tenant is returned as sent.
func (p *Provider) canonicalTenant(tenant string) string {
	if strings.EqualFold(tenant, p.cfg.Tenant) {
		return p.cfg.Tenant
	}
	if lower := strings.ToLower(tenant); tenantIndependent(lower) {
		return lower
	}
	return tenant
}

// tokenTenantError is the refusal of a token request made on tenant before
// any client is known: an unknown tenant (AADSTS90002) or /common and
// /consumers (AADSTS9001023). /organizations is refused once the client is
// known (AADSTS50194), as Entra names the application.
func (p *Provider) tokenTenantError(tenant string) *TokenError {
	switch tenant = p.canonicalTenant(tenant); {
	case tenant == p.cfg.Tenant, tenant == tenantOrganizations:
		return nil
	case tenant == tenantCommon, tenant == tenantConsumers:
		return errCommonEndpoint()
	}
	return errUnknownTenant(p.redactor.Log(tenant))
}
