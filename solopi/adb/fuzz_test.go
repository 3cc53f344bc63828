package adb

import (
	"strings"
	"testing"
)

func FuzzParseDevicesL(f *testing.F) {
	f.Add("127.0.0.1:5601         device product:simphone model:SimPhone device:sim transport_id:1\n")
	f.Add("127.0.0.1:5601\tdevice\n")
	f.Fuzz(func(t *testing.T, s string) {
		for _, d := range parseDevicesL(s) {
			if d.Serial == "" || strings.ContainsAny(d.Serial, "\n") || strings.ContainsAny(d.State, "\n") {
				t.Fatalf("bad entry %+v from %q", d, s)
			}
			if !strings.Contains(s, d.Serial) {
				t.Fatalf("serial %q not in input", d.Serial)
			}
		}
	})
}
