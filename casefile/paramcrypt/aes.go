package paramcrypt

import (
	"crypto/aes"
	"crypto/cipher"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// DefaultSeed is SoloPi's default parameter-encryption seed
// (AESUtils.DEFAULT_AES_KEY, settings key KEY_AES_KEY).
const DefaultSeed = "com.alipay.hulu"

// errDecrypt is wrapped by every Decrypt failure, so callers can tell "this
// value is not ciphertext for this seed" from other problems with errors.Is.
var errDecrypt = errors.New("paramcrypt: parameter does not decrypt")

// cipherForSeed derives SoloPi's AES-256 key from the seed and returns the
// block cipher. The key is a local value only: it is never returned, logged
// or formatted, because it protects every case on every device that kept
// the seed.
func cipherForSeed(seed string) (cipher.Block, error) {
	// Java's getBytes("US-ASCII") maps every non-ASCII char to '?'.
	raw := make([]byte, 0, len(seed))
	for _, r := range seed {
		if r > 0x7F {
			r = '?'
		}
		raw = append(raw, byte(r))
	}
	key := deriveInsecureKey(raw, 32)
	block, err := aes.NewCipher(key)
	clear(key)
	if err != nil {
		return nil, fmt.Errorf("paramcrypt: aes key setup: %w", err)
	}
	return block, nil
}

// Encrypt encrypts a parameter value like SoloPi's AESUtils.encrypt:
// AES-256/ECB/PKCS7 over the UTF-8 bytes, uppercase hex. An empty seed means
// SoloPi stores values in plain text, so the value is returned unchanged.
func Encrypt(seed, plain string) string {
	if seed == "" {
		return plain
	}
	block, err := cipherForSeed(seed)
	if err != nil {
		// aes.NewCipher only fails for a bad key length, and ours is fixed.
		panic(err)
	}
	bs := block.BlockSize()
	pad := bs - len(plain)%bs
	buf := make([]byte, len(plain)+pad)
	copy(buf, plain)
	for i := len(plain); i < len(buf); i++ {
		buf[i] = byte(pad)
	}
	// ECB: every block independently. Go has no ECB mode on purpose; SoloPi's
	// format requires it.
	for i := 0; i < len(buf); i += bs {
		block.Encrypt(buf[i:i+bs], buf[i:i+bs])
	}
	return hexUpper(buf)
}

// decrypt reverses Encrypt. An empty seed returns the value unchanged (SoloPi
// does not decrypt then). Any failure (bad hex, bad length, bad padding)
// returns an error wrapping ErrDecrypt; SoloPi itself then uses the raw
// stored value, which DecryptOrRaw reproduces.
func decrypt(seed, value string) (string, error) {
	if seed == "" {
		return value, nil
	}
	data, err := parseJavaHex(value)
	if err != nil {
		return "", fmt.Errorf("%w: %v", errDecrypt, err)
	}
	block, err := cipherForSeed(seed)
	if err != nil {
		return "", err
	}
	bs := block.BlockSize()
	if len(data) == 0 || len(data)%bs != 0 {
		return "", fmt.Errorf("%w: ciphertext length %d is not a positive multiple of %d", errDecrypt, len(data), bs)
	}
	for i := 0; i < len(data); i += bs {
		block.Decrypt(data[i:i+bs], data[i:i+bs])
	}
	pad := int(data[len(data)-1])
	if pad < 1 || pad > bs {
		return "", fmt.Errorf("%w: bad padding", errDecrypt)
	}
	for _, b := range data[len(data)-pad:] {
		if int(b) != pad {
			return "", fmt.Errorf("%w: bad padding", errDecrypt)
		}
	}
	out := data[:len(data)-pad]
	// Java's new String(bytes) replaces malformed UTF-8 with U+FFFD.
	if !utf8.Valid(out) {
		return strings.ToValidUTF8(string(out), "\uFFFD"), nil
	}
	return string(out), nil
}

// DecryptOrRaw is the device's OperationMethod.getParam behaviour: a value
// that does not decrypt is returned as stored.
func DecryptOrRaw(seed, value string) string {
	plain, err := decrypt(seed, value)
	if err != nil {
		return value
	}
	return plain
}

func hexUpper(b []byte) string {
	const digits = "0123456789ABCDEF"
	out := make([]byte, 2*len(b))
	for i, c := range b {
		out[2*i] = digits[c>>4]
		out[2*i+1] = digits[c&0x0F]
	}
	return string(out)
}

// parseJavaHex follows AESUtils.toByte: pairs of hex digits in either case;
// a trailing odd digit is ignored, as Java's length/2 loop ignores it.
func parseJavaHex(s string) ([]byte, error) {
	n := len(s) / 2
	out := make([]byte, n)
	for i := 0; i < n; i++ {
		hi, ok1 := hexVal(s[2*i])
		lo, ok2 := hexVal(s[2*i+1])
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("invalid hex at offset %d", 2*i)
		}
		out[i] = hi<<4 | lo
	}
	return out, nil
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
