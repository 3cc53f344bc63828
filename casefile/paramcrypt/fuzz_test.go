package paramcrypt

import (
	"errors"
	"testing"
	"unicode/utf8"
)

// FuzzDecrypt feeds Decrypt what a case file may hold in an encrypted
// parameter: it never panics, a failure is always ErrDecrypt (and
// DecryptOrRaw then keeps the value as stored), and a value that decrypts
// is valid UTF-8 that survives a round trip.
func FuzzDecrypt(f *testing.F) {
	f.Add("70E64B6009261E23085996D7F3785F4C")
	f.Add(Encrypt(DefaultSeed, "secret text"))
	f.Add("")
	f.Add("zz")
	f.Add("0123456789abcdef0123456789ABCDEF")
	f.Fuzz(func(t *testing.T, value string) {
		plain, err := decrypt(DefaultSeed, value)
		if err != nil {
			if !errors.Is(err, errDecrypt) {
				t.Fatalf("Decrypt(%q): %v is not ErrDecrypt", value, err)
			}
			if got := DecryptOrRaw(DefaultSeed, value); got != value {
				t.Fatalf("DecryptOrRaw(%q) = %q, want the value as stored", value, got)
			}
			return
		}
		if !utf8.ValidString(plain) {
			t.Fatalf("Decrypt(%q) = %q: not UTF-8", value, plain)
		}
		if back, err := decrypt(DefaultSeed, Encrypt(DefaultSeed, plain)); err != nil || back != plain {
			t.Fatalf("round trip of %q: %q, %v", plain, back, err)
		}
	})
}
