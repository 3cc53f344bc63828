package agentfake

import (
	"testing"

	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/transporttest"
)

// The fake passes the transport conformance suite: everything but its
// scripted Agent resolver is the simulated phone.
func TestConformance(t *testing.T) {
	transporttest.Run(t, func(t *testing.T) transporttest.Fixture {
		d := New()
		t.Cleanup(d.Close)
		return transporttest.Fixture{Transport: d, HTTPPort: protocol.DefaultDevicePort, Scratch: "/data/local/tmp"}
	})
}
