package device

import "github.com/solopi-dev/solopi/protocol"

// Param is one query parameter and Params an ordered list of them: the
// parameters of a mutation or query, encoded by protocol.MutationURI and
// protocol.QueryPath (docs/device-protocol.md#mutations).
type (
	Param  = protocol.Param
	Params = protocol.Params
)

// P builds Params from alternating keys and values.
func P(kv ...string) Params { return protocol.P(kv...) }
