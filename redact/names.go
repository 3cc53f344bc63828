package redact

import "strings"

// secretWords are the words a name of secret data contains (compared
// lowercased without '_' and '-').
var secretWords = []string{"password", "passwd", "secret", "token", "apikey", "credential"}

// SecretName reports whether a name given to a value by its author (a
// requirement's parameter, test datum or binding) says the value is a
// secret: one of the sensitive keys Value drops, or a name containing
// password, passwd, secret, token, apikey or credential (loginPassword,
// client_secret, API-Token).
func SecretName(name string) bool {
	if sensitive(name) {
		return true
	}
	k := strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(name))
	for _, w := range secretWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}
