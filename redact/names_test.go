package redact

import "testing"

func TestSecretName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"password": true, "loginPassword": true, "client_secret": true, "API-Token": true, "apiKey": true, "Authorization": true,
		"passwd": true, "dbCredentials": true, "ownerToken": true,
		"user": false, "name": false, "expectedValue": false, "count": false, "pass": false,
	} {
		if got := SecretName(name); got != want {
			t.Errorf("SecretName(%q) = %v, want %v", name, got, want)
		}
	}
}
