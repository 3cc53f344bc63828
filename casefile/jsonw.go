package casefile

import (
	"fmt"

	"github.com/solopi-dev/solopi/protocol"
)

// encodeJSON writes a case tree in SoloPi's JSON dialect
// (protocol.EncodeJSON): the device hashes its snapshot string byte for byte
// into caseFingerprint, so encoding/json (which escapes <, > and &) cannot
// be used. Object keys are always sorted (fastjson's bean property order and
// MapSortField); omitNull drops null members, as fastjson does without
// WriteMapNullValue.
func encodeJSON(v any, omitNull bool) (string, error) {
	b, err := protocol.EncodeJSON(v, protocol.JSONOptions{KeepNulls: !omitNull})
	if err != nil {
		return "", fmt.Errorf("casefile: %w", err)
	}
	return string(b), nil
}
